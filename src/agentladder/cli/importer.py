"""``agentladder import``: judged results from JSONL files, Inspect AI logs and saved
pages of Langfuse's public API (docs/import.md), with a progress bar and its rate, or
``--json`` for the summary only; read within bounds that options may raise
(``importing.bounds``)."""

from __future__ import annotations

import itertools
import math
import os
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentladder.cli.commands import app
from agentladder.cli.data import ConfigOpt, JsonOpt, StoreOpt, _with_services
from agentladder.cli.handoff import can_hand_off, hand_off
from agentladder.cli.stores import CreateOpt
from agentladder.domain.agents import validate_agent_name
from agentladder.domain.eval_mapping import SUCCESS_FROM
from agentladder.domain.scales import Scale
from agentladder.domain.skill.rules import SkillRules
from agentladder.errors import InvalidInput
from agentladder.importing.bounds import ImportBounds, parse_size
from agentladder.importing.inspect_logs import InspectOptions
from agentladder.importing.items import Item
from agentladder.importing.langfuse import TASK_TYPE_TAG, LangfuseOptions
from agentladder.importing.last_step import hand_over
from agentladder.importing.report import FITTED, exit_status, report_lines
from agentladder.importing.run import Summary, run_import
from agentladder.importing.sources import Format, count_lines, read_sources
from agentladder.importing.walk import found
from agentladder.services.container import Services
from agentladder.services.oracle.service import check_task_type
from agentladder.store.memory import MemoryStore

__all__ = ["import_results", "parse_agent_map", "parse_categories"]

err = Console(stderr=True)
_DEFAULT = ImportBounds()


def parse_agent_map(pairs: list[str]) -> dict[str, str]:
    """``MODEL=AGENT_ID`` options as a mapping (the agent id checked)."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        model, sep, agent_id = pair.rpartition("=")
        if not sep or not model:
            raise InvalidInput("--agent", pair, "must be MODEL=AGENT_ID")
        mapping[model] = validate_agent_name(agent_id, "--agent")
    return mapping


def parse_categories(pairs: list[str]) -> dict[str, float]:
    """``LABEL=SCORE`` options (a Langfuse categorical score's label, its score on 0-10)
    as a mapping."""
    mapping: dict[str, float] = {}
    for pair in pairs:
        label, sep, text = pair.rpartition("=")
        if not sep or not label:
            raise InvalidInput("--category", pair, "must be LABEL=SCORE")
        try:
            score = float(text)
        except ValueError:
            score = math.nan
        if not 0.0 <= score <= 10.0:
            raise InvalidInput("--category", pair, "SCORE must be a number from 0 to 10")
        mapping[label] = score
    return mapping


def _store_url(store: str | None, db: Path | None) -> str | None:
    if store is not None and db is not None:
        raise InvalidInput("--db", str(db), "give --store or --db, not both")
    return f"sqlite:///{db}" if db is not None else store


@app.command("import")
def import_results(
    paths: Annotated[list[Path], typer.Argument(help="JSONL files, Inspect logs, or folders.")],
    file_format: Annotated[
        Format | None,
        typer.Option("--format", help="jsonl, inspect or langfuse (default: by suffix)."),
    ] = None,
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent", help="MODEL=AGENT_ID: the agent of an Inspect log's or Langfuse's model."
        ),
    ] = None,
    task_type: Annotated[
        str | None, typer.Option(help="The task type (JSONL: of lines naming none).")
    ] = None,
    task_type_tag: Annotated[
        str,
        typer.Option(metavar="PREFIX", help="Langfuse: the trace tag prefix naming a task type."),
    ] = TASK_TYPE_TAG,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            help="LABEL=SCORE: the score (0-10) of a Langfuse categorical score's label.",
        ),
    ] = None,
    scorer: Annotated[
        str | None, typer.Option(help="The scorer to read when a log has several.")
    ] = None,
    scale: Annotated[
        Scale | None,
        typer.Option(
            help="The scale of the scores: 0-1, 1-10, 0-10 or 0-100 (JSONL: of lines naming"
            " none, else 0-10; Inspect: of every scorer, else each decided from its values)."
        ),
    ] = None,
    success_threshold: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=10.0,
            help="The lowest score (0-10) that is a success, for a JSONL line without"
            " success and an Inspect sample (5).",
        ),
    ] = SUCCESS_FROM,
    include_errors: Annotated[
        bool,
        typer.Option(
            "--include-errors",
            help="Import the samples and lines that failed for reasons not the agent's"
            " (errors, refused model calls) as failures instead of skipping them.",
        ),
    ] = False,
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: Annotated[Path | None, typer.Option("--db", help="A SQLite file to import into.")] = None,
    create: CreateOpt = False,
    as_json: JsonOpt = False,
    max_line: Annotated[
        str, typer.Option(metavar="SIZE", help="The longest JSONL line read (1MiB).")
    ] = "1MiB",
    max_member: Annotated[
        str,
        typer.Option(metavar="SIZE", help="The most one .eval member decompresses to (512MiB)."),
    ] = "512MiB",
    max_ratio: Annotated[
        int,
        typer.Option(min=1, help="The most one .eval member decompresses per byte (200)."),
    ] = _DEFAULT.max_ratio,
    max_members: Annotated[
        int, typer.Option(min=1, help="The most members of one .eval log (100000).")
    ] = _DEFAULT.max_members,
    max_string: Annotated[
        str,
        typer.Option(metavar="SIZE", help="The longest string or number in a log (32MiB)."),
    ] = "32MiB",
) -> None:
    """Import judged results, each exactly once; exit 1 when an item was refused or
    conflicted, or a file or folder yielded nothing (the others are imported)."""
    check_task_type(task_type)
    mapping = parse_agent_map(agent or [])
    categories = parse_categories(category or [])
    if not task_type_tag:
        raise InvalidInput("--task-type-tag", task_type_tag, "must not be empty")
    url = _store_url(store, db)
    bounds = ImportBounds(
        max_line=parse_size("--max-line", max_line),
        max_member=parse_size("--max-member", max_member),
        max_ratio=max_ratio,
        max_members=max_members,
        max_string=parse_size("--max-string", max_string),
    )
    walked = found(paths, bounds)
    files = walked.files
    total = None if as_json else count_lines(files, file_format)

    handing_off = can_hand_off()
    fits = False
    handed: tuple[str, SkillRules] | None = None

    async def work(services: Services) -> Summary:
        nonlocal fits, handing_off, handed
        options = InspectOptions(
            mapping, task_type, scorer, services.oracle.agents, scale,
            success_from=success_threshold, include_errors=include_errors,
        )  # fmt: skip
        langfuse = LangfuseOptions(
            mapping, task_type, task_type_tag, scale, categories, success_threshold
        )
        read = read_sources(files, file_format, options, bounds, langfuse)
        items = itertools.chain(walked.entries, read)
        if as_json:
            summary = await run_import(services.oracle, items, fit=False)
        else:
            summary = await _with_bar(services, items, total)
        skill = services.oracle.skill  # a re-run after a kill before the fit fits too
        fits = skill is not None and await skill.needs_fit()
        handing_off = handing_off and not _in_memory(services)
        handed = (url or services.settings.store, services.settings.skill)
        if fits and not handing_off:
            await _fit(services, summary, as_json, said=not _in_memory(services))
        return summary

    # history into a new store, but never in place of one whose file vanished
    summary = _with_services(config, url, work, create=True, forget=create)
    if fits and handing_off and handed is not None:
        _hand_off_fit(summary, *handed, as_json)  # returns only when it could not
        summary = _with_services(config, url, _fitting(summary, as_json), create=True, forget=False)
    _report(summary, as_json)


def _in_memory(services: Services) -> bool:
    """Whether the store is the in-memory one, which a new image would not see."""
    store = getattr(services.store, "wrapped", services.store)
    return isinstance(store, MemoryStore)


async def _with_bar(services: Services, items: Iterable[Item], total: int | None) -> Summary:
    """The import with a progress bar and its rate on standard error."""
    with Progress(
        TextColumn("importing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:,.0f}/s"),
        TimeElapsedColumn(),
        console=err,
    ) as bar:
        task = bar.add_task("import", total=total, rate=0.0)

        def shown(summary: Summary) -> None:
            bar.update(task, completed=summary.items, rate=summary.per_second)

        summary = await run_import(services.oracle, items, progress=shown, fit=False)
        bar.update(task, total=summary.items, completed=summary.items)
        return summary


async def _fit(services: Services, summary: Summary, as_json: bool, said: bool = True) -> None:
    """The import's last step: the skill model fitted to the whole log (its order does not
    count), its time added to the summary's; ``said``: the summary says when a server on
    the store uses it (``FITTED``)."""
    skill = services.oracle.skill
    if skill is None:  # the skill model is off
        return
    if not as_json:
        err.print("fitting the skill model to the whole log", soft_wrap=True)
    started = time.perf_counter()
    await skill.fit()
    if said:
        summary.notes.append(FITTED)
    summary.seconds += time.perf_counter() - started
    summary.per_second = summary.items / summary.seconds if summary.seconds else 0.0


def _fitting(summary: Summary, as_json: bool) -> Callable[[Services], Awaitable[Summary]]:
    async def work(services: Services) -> Summary:
        await _fit(services, summary, as_json)
        return summary

    return work


def _hand_off_fit(summary: Summary, store: str, rules: SkillRules, as_json: bool) -> None:
    """The fit and the report in a fresh image of the program (``cli/handoff.py``,
    ``importing/last_step.py``): what it needs in a private temporary file that it reads
    and removes."""
    handle, name = tempfile.mkstemp(prefix="agentladder-import-", suffix=".json")
    with os.fdopen(handle, "w") as out:
        out.write(hand_over(summary, store, rules))
    hand_off("agentladder.importing.last_step", [name, *(["--json"] if as_json else [])])
    Path(name).unlink(missing_ok=True)


def _report(summary: Summary, as_json: bool) -> None:
    """The summary on standard output (its problems on standard error); exit 1 when an
    item was refused or conflicted."""
    out, errors = report_lines(summary, as_json)
    for line in errors:
        err.print(line, markup=False, soft_wrap=True)
    for line in out:
        typer.echo(line)
    if exit_status(summary):
        raise typer.Exit(code=1)
