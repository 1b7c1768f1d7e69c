"""``agentladder skills``: the evidence model's board, with intervals, the settled agents
in tiers and the provisional ones apart, and how fresh it is; ``agentladder skill fit``:
the fit of what awaits it, now; ``agentladder skill rebuild``: the fit of the whole skill
log, now (after a change of the rules); ``agentladder skill judges``: every source of
scores the fit knows."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.table import Table

from agentladder.cli.commands import app, console
from agentladder.cli.data import (
    ConfigOpt,
    JsonOpt,
    StoreOpt,
    _print_json,
    _with_services,
    typo_hint,
)
from agentladder.cli.shown import EMPTY_STORE
from agentladder.cli.stores import DbOpt, store_url
from agentladder.domain.skill.board import SkillEntry
from agentladder.domain.skill.judges import SourceRecord, source_records
from agentladder.services.container import Services
from agentladder.services.skill.freshness import Freshness
from agentladder.services.skill.service import FitReport

__all__ = ["freshness_line", "skill_fit", "skill_judges", "skill_rebuild", "skills"]

skill_app = typer.Typer(help="The evidence model's states.", no_args_is_help=True)
app.add_typer(skill_app, name="skill")


@app.command()
def skills(
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    task_type: Annotated[str | None, typer.Option(help="One task type (default: overall).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Agents by skill (0-10) with 95% intervals: the settled ones in tiers, then the
    provisional ones (too little evidence for a tier) under their own heading; and when
    the estimates were last fitted, with the evidence that awaits the next fit."""

    async def read(services: Services) -> tuple[list[SkillEntry], float, Freshness, str]:
        fleet = await services.store.get_fleet_skill()
        board = await services.skill.board(task_type, limit)
        shown = services.skill.rules.provisional_sd, await services.skill.freshness(fleet)
        return board, *shown, await typo_hint(services, task_type if not board else None)

    rows, provisional_sd, fresh, typo = _with_services(config, store_url(store, db), read)
    if as_json:
        _print_json({"task_type": task_type, "entries": [r.model_dump(mode="json") for r in rows],
                     "fitted_at": fresh.fitted_at, "pending": fresh.pending})  # fmt: skip
        return
    if not rows:
        where = f" at {task_type}" if task_type else ""
        then = f"; {typo}" if typo else f": {EMPTY_STORE}."
        console.print(f"No skill evidence{where} yet{then}", highlight=False)
        if fresh.pending:
            console.print(freshness_line(fresh), highlight=False)
        return
    where = f"at {task_type}" if task_type else "overall"
    settled = [r for r in rows if not r.provisional]
    if settled:
        title = (f"Skill {where}, settled agents in tiers (95% intervals; tier 1: not"
                 " separated from the best among settled agents)")  # fmt: skip
        console.print(_table(title, settled, tiered=True))
    provisional = [r for r in rows if r.provisional]
    if provisional:
        title = (f"Provisional {where}: too little evidence for a tier (sd above"
                 f" {provisional_sd:g})")  # fmt: skip
        console.print(_table(title, provisional, tiered=False))
    console.print(freshness_line(fresh), highlight=False)


def _table(title: str, rows: list[SkillEntry], *, tiered: bool) -> Table:
    """Rows of the board, every column labelled; an id is shown whole (folded onto more
    lines when narrow): two never read the same."""
    table = Table(title=title)
    if tiered:
        table.add_column("tier")
    table.add_column("agent", overflow="fold", ratio=1, min_width=12)
    for column in ("skill", "interval", "sd", "observations"):
        table.add_column(column, overflow="fold")
    for r in rows:
        cells = [r.agent_id, f"{r.skill:.2f}", f"{r.low:.2f}-{r.high:.2f}", f"{r.sd:.2f}",
                 str(r.observations)]  # fmt: skip
        table.add_row(*([str(r.tier)] if tiered else []), *cells)
    return table


def freshness_line(fresh: Freshness) -> str:
    """When the estimates were last fitted and what awaits the next fit, in one line."""
    when = "not fitted yet" if fresh.fitted_at is None else f"fitted {utc(fresh.fitted_at)}"
    if not fresh.pending:
        return f"Skill {when}; no evidence awaits the next fit."
    events = f"{fresh.pending} skill event{'' if fresh.pending == 1 else 's'}"
    return (
        f"Skill {when}; {events} await{'s' if fresh.pending == 1 else ''} the next fit (each"
        " moved the estimates by one filter step at most): `agentladder skill fit` fits them now."
    )


def utc(at: float) -> str:
    """Unix seconds as ``2026-01-05 10:00:00 UTC`` (the dashboard's format)."""
    return f"{datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M:%S} UTC"


@skill_app.command("fit")
def skill_fit(
    config: ConfigOpt = None, store: StoreOpt = None, db: DbOpt = None, as_json: JsonOpt = False
) -> None:
    """Fit the skill log now if evidence awaits the fit (the events stored since the last
    fit, or a change of the skill rules); say what it did."""
    report, fresh, before = _with_services(config, store_url(store, db), _fit)
    if as_json:
        _print_json({"ran": report.ran, "events": report.events, "seq": report.seq,
                     "fitted": before, "seconds": round(report.seconds, 3),
                     "fitted_at": fresh.fitted_at, "pending": fresh.pending})  # fmt: skip
        return
    if not report.ran:
        console.print(freshness_line(fresh), highlight=False)
        return
    why = f"{before} skill event{'' if before == 1 else 's'} awaited the fit"
    if not before:
        why = "the skill rules changed since the last fit"
    console.print(
        f"[green]fitted[/]: {why}; {report.events} fitted in all ({report.seconds:.1f} s),"
        f" {utc(fresh.fitted_at or 0)}"
    )
    if fresh.pending:  # stored by another process while it ran
        console.print(freshness_line(fresh), highlight=False)


async def _fit(services: Services) -> tuple[FitReport, Freshness, int]:
    skill = services.skill
    before = await skill.freshness()
    if not await skill.needs_fit():
        fleet = await services.store.get_fleet_skill()
        done = fleet.fit
        report = FitReport(0, 0, ran=False) if done is None else FitReport(
            done.seq, done.events, ran=False, at=done.at
        )  # fmt: skip
        return report, before, before.pending
    report = await skill.fit()
    return report, await skill.freshness(), before.pending


@skill_app.command("judges")
def skill_judges(
    config: ConfigOpt = None, store: StoreOpt = None, db: DbOpt = None, as_json: JsonOpt = False
) -> None:
    """Every source of scores the last fit knows (judges, agents as peer evaluators, the
    aggregated reports, each gateway client's feedback), most evidence first: its
    leniency, noise, honesty, weight and a warning where its scores count little."""

    async def read(services: Services) -> tuple[list[SourceRecord], Freshness]:
        fleet = await services.store.get_fleet_skill()
        skills = await services.store.list_skills()
        return source_records(fleet, skills, clients=True), await services.skill.freshness(fleet)

    records, fresh = _with_services(config, store_url(store, db), read)
    if as_json:
        _print_json({"fitted_at": fresh.fitted_at, "pending": fresh.pending,
                     "judges": [r.model_dump(mode="json") for r in records]})  # fmt: skip
        return
    if not records:
        console.print(f"No source of scores fitted yet. {freshness_line(fresh)}", highlight=False)
        return
    table = Table(title="Sources of scores (score points; share: of the scale, overall)")
    table.add_column("source", overflow="fold", ratio=1, min_width=12)
    for column in ("observations", "leniency", "noise sd", "honesty", "share"):
        table.add_column(column, overflow="fold")
    for r in records:
        table.add_row(
            r.source + (" (!)" if r.warning else ""), str(r.observations),
            f"{round(r.leniency, 2) + 0.0:+.2f} ± {r.leniency_sd:.2f}",  # never -0.00
            f"{r.noise_sd:.2f}", f"{r.honesty:.2f}",
            f"{100 * r.share:.0f}%",
        )  # fmt: skip
    console.print(table)
    for r in records:  # whole lines: a table column would fold them in a narrow terminal
        if r.warning:
            console.print(f"(!) {r.source}: {r.warning}", highlight=False, soft_wrap=True)
    console.print(freshness_line(fresh), highlight=False)


@skill_app.command("rebuild")
def skill_rebuild(
    config: ConfigOpt = None, store: StoreOpt = None, db: DbOpt = None, as_json: JsonOpt = False
) -> None:
    """Fit the whole skill log now and replace every state (after a change of skill rules)."""
    started = time.perf_counter()
    report, count = _with_services(config, store_url(store, db), _rebuild)
    took = time.perf_counter() - started
    if as_json:
        _print_json({"events": report.events, "seq": report.seq, "agents": count,
                     "seconds": round(took, 3)})  # fmt: skip
        return
    console.print(
        f"[green]rebuilt[/]: {report.events} skill events fitted, {count} agents' states"
        f" replaced ({took:.1f} s)"
    )


async def _rebuild(services: Services) -> tuple[FitReport, int]:
    report = await services.skill.fit(force=True)
    return report, len(await services.store.list_skills())
