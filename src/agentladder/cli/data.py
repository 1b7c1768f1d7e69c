"""The commands that read and write the data: agents, leaderboard, profile, judge,
oracle verify (deliberate: ``cli/deliberate.py``). Each opens the store of the
configuration (or ``--store URL``, ``--db FILE``) directly, one that exists
(``cli/stores.py``); ``--json`` prints machine-readable output for scripts."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table

from agentladder.cli.commands import app, console
from agentladder.cli.demofile import demo_fallback, demo_settings_for
from agentladder.cli.shown import EMPTY_STORE, average, dollars
from agentladder.cli.stores import (
    CreateOpt,
    DbOpt,
    check_exists,
    forget_vanished_store,
    store_url,
)
from agentladder.config import Settings, load_settings, parse_settings
from agentladder.domain.probation import OVERALL, EffectiveRate, streams_on_probation
from agentladder.domain.profile import AgentProfile
from agentladder.domain.scales import Scale
from agentladder.domain.skill.board import SkillEntry
from agentladder.domain.suggestions import hint
from agentladder.errors import NotFound
from agentladder.services.container import Services, build_services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.verify import verify_store
from agentladder.services.skill.service import AgentSkills
from agentladder.store.records import LeaderboardRow

__all__ = ["oracle_app"]

T = TypeVar("T")
oracle_app = typer.Typer(help="The Oracle's maintenance commands.", no_args_is_help=True)
app.add_typer(oracle_app, name="oracle")

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="The YAML configuration.")]
StoreOpt = Annotated[str | None, typer.Option("--store", help="Store URL (default: the config's).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _with_services(
    config: Path | None,
    store: str | None,
    work: Callable[[Services], Awaitable[T]],
    *,
    create: bool = False,
    forget: bool | None = None,
) -> T:
    """Build the services over the store ``store`` names (else the configuration's; with
    neither, the demo's file when the default one is missing: ``cli/demofile.py``), run
    ``work``, close them; a store that does not exist is refused unless ``create``, and
    one whose marker says it vanished unless ``forget`` (default: ``create``;
    ``cli/stores.py``); a store the demo wrote, opened without ``--config``, brings the
    demo's agents; a failure is one line (cli.oneline)."""
    settings: Settings = load_settings(config) if config else parse_settings(None)
    url = store or settings.store
    if store is None and config is None and not create:
        url = demo_fallback(url)
    if not create:
        check_exists(url)
    if create if forget is None else forget:
        forget_vanished_store(url)
    if config is None:
        settings = demo_settings_for(url) or settings

    async def run() -> T:
        services = await build_services(settings, store_url=url)
        try:
            return await work(services)
        finally:
            await services.close()

    return asyncio.run(run())


def _print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str))


@app.command()
def agents(
    config: ConfigOpt = None, store: StoreOpt = None, db: DbOpt = None, as_json: JsonOpt = False
) -> None:
    """List the registered agents with status, rank and cost per round."""

    async def work(services: Services) -> list[dict[str, Any]]:
        stats = await services.store.list_stats()
        return [
            {
                **v.registration.config.model_dump(mode="json"),
                "status": v.status.value,
                "rank": stats[v.agent_id].value.rank if v.agent_id in stats else 0,
            }
            for v in await services.registry.list()
        ]

    rows = _with_services(config, store_url(store, db), work)
    if as_json:
        _print_json({"agents": rows})
        return
    if not rows:
        console.print(f"No agents in this store yet: configure them (`agentladder serve"
                      f" --config FILE` registers them), or {EMPTY_STORE}.",
                      highlight=False)  # fmt: skip
        return
    table = Table(title="Agents")
    table.add_column("name", overflow="fold")
    for column in ("provider", "model", "status", "rank", "cost/round"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"], row["provider_id"], row["model_name"], row["status"],
                      str(row["rank"]), dollars(row["estimated_cost_per_round"]))  # fmt: skip
    console.print(table)


@app.command()
def leaderboard(
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    task_type: Annotated[str | None, typer.Option(help="One task type.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 10,
    as_json: JsonOpt = False,
) -> None:
    """The XP leaderboard, overall or for one task type (then the specialization's XP,
    level, tasks and average score)."""
    rows, scored, typo = _with_services(
        config, store_url(store, db), lambda s: _leaderboard(s, task_type, limit)
    )
    if as_json:
        _print_json({"entries": [r.model_dump(mode="json") for r in rows]})
        return
    if not rows:
        where = f" in {task_type}" if task_type else ""
        then = f"; {typo}" if typo else f": {EMPTY_STORE}."
        console.print(f"Nobody has been judged{where} yet{then}", highlight=False)
        return
    table = Table(title=f"Leaderboard{' for ' + task_type if task_type else ''}")
    for column in ("#", "agent", "xp", "level", "tasks", "avg score"):
        table.add_column(column, overflow="fold" if column == "agent" else "ellipsis")
    for r in rows:
        figures = (r.xp, r.level, r.tasks, r.average_score)
        if task_type is not None:
            figures = (r.specialization_xp or 0, r.specialization_level or r.level,
                       r.specialization_tasks or 0, r.specialization_avg_score or 0.0)  # fmt: skip
        xp, level, tasks, mean = figures
        table.add_row(str(r.position), r.agent_id, str(xp), level.value, str(tasks),
                      average(mean, scored.get(r.agent_id, 0)))  # fmt: skip
    console.print(table)


async def typo_hint(services: Services, task_type: str | None) -> str:
    """``did you mean code_review?`` for a task type nobody has evidence at that is close
    to one somebody has (``""`` otherwise, and for no task type)."""
    if task_type is None:
        return ""
    known = await services.routing.task_types()
    return "" if task_type in known else hint(task_type, known)


async def _leaderboard(
    services: Services, task_type: str | None, limit: int
) -> tuple[list[LeaderboardRow], dict[str, int], str]:
    """The board's rows, how many scored tasks each agent's average is over (overall, or
    at ``task_type``), and ``typo_hint`` when nobody is on it."""
    rows = await services.oracle.get_leaderboard(task_type, limit)
    if not rows:
        return rows, {}, await typo_hint(services, task_type)
    profiles = await asyncio.gather(*(services.oracle.get_profile(r.agent_id) for r in rows))
    scored = {
        p.id: p.stats.scored_tasks
        if task_type is None
        else getattr(p.specializations.get(task_type), "scored_tasks", 0)
        for p in profiles
    }
    return rows, scored, ""


@app.command()
def profile(
    agent_id: Annotated[str, typer.Argument(help="The agent.")],
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """An agent's Oracle profile: XP, level, probation, skill, specializations,
    achievements, stats."""
    found, skill, probation = _with_services(
        config, store_url(store, db), lambda s: _profile(s, agent_id)
    )
    if as_json:
        _print_json(found.model_dump(mode="json"))
        return
    say = functools.partial(console.print, highlight=False, soft_wrap=True)
    say(f"[bold]{found.id}[/] ({found.provider or '-'} {found.model or '-'}): {found.xp} XP,"
        f" {found.level.value}")  # fmt: skip
    stats = found.stats
    say(f"  {stats.total_tasks} tasks, {stats.successful_tasks} successful, average score"
        f" {average(stats.average_score, stats.scored_tasks)}, total cost"
        f" {dollars(stats.total_cost_incurred)}")  # fmt: skip
    if skill is None:
        say("  skill: no evidence yet")
    else:
        count = len(skill.task_types) + len(skill.predicted)
        say(f"  skill: {_skill_text(skill.overall)}; the mean of the {count} task"
            f" type{'' if count == 1 else 's'} below")  # fmt: skip
    for entry in [] if skill is None else skill.task_types:
        say(f"    at {entry.task_type}: {_skill_text(entry)}")
    for entry in [] if skill is None else skill.predicted:
        say(f"    at {entry.task_type}: {_skill_text(entry)}, predicted (not done yet)")
    if not probation:
        say("  probation: none (validated at its level's rate)")
    for stream, rate in probation.items():
        where = "overall" if stream == OVERALL else stream
        cause = found.probation[stream].cause.value.replace("_", " ")
        say(f"  probation ({where}): since a {cause}, every task validated;"
            f" {rate.clearance_left} passed validations to go")  # fmt: skip
    for task_type, spec in found.specializations.items():
        say(f"  {task_type}: {spec.xp} XP, {spec.level.value}, {spec.tasks_judged} tasks,"
            f" average {average(spec.avg_score, spec.scored_tasks)},"
            f" best {average(spec.best_score, spec.scored_tasks)}")  # fmt: skip
    say("  achievements: " + (", ".join(a.name for a in found.achievements) or "none"))


def _skill_text(entry: SkillEntry) -> str:
    mark = ", provisional" if entry.provisional else ""
    return (f"{entry.skill:.2f} (95% {entry.low:.2f}-{entry.high:.2f}, {entry.observations}"
            f" observations{mark})")  # fmt: skip


async def _profile(
    services: Services, agent_id: str
) -> tuple[AgentProfile, AgentSkills | None, dict[str, EffectiveRate]]:
    """The profile, its skill (None without evidence) and its streams on probation now."""
    found = await services.oracle.get_profile(agent_id)
    try:
        skill: AgentSkills | None = await services.skill.of_agent(agent_id)
    except NotFound:
        skill = None
    oracle = services.oracle
    return found, skill, streams_on_probation(found, oracle.rules, oracle.sentinel)


@app.command()
def judge(
    agent_id: Annotated[str, typer.Option(help="The judged agent.")],
    contract_id: Annotated[str, typer.Option(help="The task's contract id.")],
    score: Annotated[float | None, typer.Option(help="0 to 10 (or on --scale).")] = None,
    task_type: Annotated[str, typer.Option()] = "general",
    judge_name: Annotated[
        str | None,
        typer.Option("--judge", help="Who scored it (its noise and leniency are learned)."),
    ] = None,
    scale: Annotated[
        Scale | None, typer.Option(help="The scale of --score: 0-1, 1-10, 0-10 or 0-100.")
    ] = None,
    failed: Annotated[bool, typer.Option("--failed", help="The task failed.")] = False,
    retries: Annotated[int, typer.Option(min=0)] = 0,
    cost: Annotated[float, typer.Option(min=0)] = 0.0,
    budget: Annotated[float | None, typer.Option(min=0)] = None,
    new_agent: Annotated[
        bool,
        typer.Option(
            "--new-agent",
            help="The agent is new: judge it though nobody configured, registered or judged it"
            " before (else such an id is refused as a likely typo).",
        ),
    ] = False,
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    create: CreateOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Submit one judged task to the Oracle and show the itemized award."""
    request = JudgmentRequest(
        agent_id=agent_id, contract_id=contract_id, score=score, task_type=task_type,
        success=not failed, retries=retries, cost=cost, budget=budget, new_agent=new_agent,
        judge=judge_name, scale=scale,
    )  # fmt: skip
    result = _with_services(
        config, store_url(store, db),
        lambda s: s.oracle.submit_for_judgment(request, settled=True), create=create,
    )  # fmt: skip
    if as_json:
        _print_json(result.model_dump(mode="json"))
        return
    # total_xp: this judgment's XP (task plus achievements), not the agent's total, which is
    # its profile's xp (docs/api.md, "Judgments")
    parts = f" (task {result.xp_awarded}, achievements {result.total_xp - result.xp_awarded})"
    earned = f"+{result.total_xp} XP{parts if result.achievements else ''}"
    if result.duplicate:
        earned = (f"duplicate of contract {result.contract_id}: its first judgment earned"
                  f" {earned}, nothing added")  # fmt: skip
    console.print(
        f"{result.agent_id}: {earned}; total now {result.profile.xp} XP,"
        f" {result.profile.level.value}", highlight=False, soft_wrap=True,
    )  # fmt: skip
    for line in result.breakdown:
        console.print(f"  {line.event}: +{line.xp}", highlight=False)
    for unlock in result.achievements:
        console.print(f"  achievement {unlock.name}: +{unlock.xp}", highlight=False)
    if result.level_up is not None and not result.duplicate:
        change = result.level_up
        console.print(f"  level up: {change.from_level.value} -> {change.to_level.value}")


@oracle_app.command("verify")
def oracle_verify(
    config: ConfigOpt = None, store: StoreOpt = None, db: DbOpt = None, as_json: JsonOpt = False
) -> None:
    """Rebuild every profile from its events; exit 1 and list differences if any."""
    report = _with_services(
        config,
        store_url(store, db),
        lambda s: verify_store(s.store, s.settings.oracle, s.settings.skill),
    )
    if as_json:
        _print_json(report.model_dump(mode="json"))
    elif report.ok:
        console.print(
            f"[green]ok[/]: {report.agents_checked} profiles equal the replay of "
            f"{report.events_replayed} events; {report.skill_agents_checked} skill states "
            f"equal the fit of {report.skill_events_replayed} skill events"
            + (f" ({report.skill_fit_pending} since the last fit, by their filter steps)"
               if report.skill_fit_pending else "")
        )  # fmt: skip
    else:
        for agent_id, fields in report.differences.items():
            for name, (stored, rebuilt) in fields.items():
                console.print(f"[red]{agent_id}[/] {name}: stored {stored!r}, replay {rebuilt!r}")
        for agent_id in report.skill_differences:
            console.print(f"[red]{agent_id}[/] skill: the stored state differs from the replay")
        if report.skill_rules_changed:
            console.print(
                "[red]skill[/]: the states were fitted with other skill rules than the"
                " configured ones; run `agentladder skill rebuild` to fit them anew"
            )
    if not report.ok:
        raise typer.Exit(code=1)
