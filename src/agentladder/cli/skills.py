"""``agentladder skills``: the evidence model's board, with intervals, the settled agents
in tiers and the provisional ones apart; and ``agentladder skill rebuild``: the fit of the
whole skill log, now."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.table import Table

from agentladder.cli.commands import app, console
from agentladder.cli.data import ConfigOpt, JsonOpt, StoreOpt, _print_json, _with_services
from agentladder.cli.shown import EMPTY_STORE
from agentladder.cli.stores import DbOpt, store_url
from agentladder.domain.skill.board import SkillEntry
from agentladder.services.container import Services
from agentladder.services.skill.service import FitReport

__all__ = ["skill_rebuild", "skills"]

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
    provisional ones (too little evidence for a tier) under their own heading."""
    rows, provisional_sd = _with_services(
        config, store_url(store, db), lambda s: _board(s, task_type, limit)
    )
    if as_json:
        _print_json({"task_type": task_type, "entries": [r.model_dump(mode="json") for r in rows]})
        return
    if not rows:
        where = f" at {task_type}" if task_type else ""
        console.print(f"No skill evidence{where} yet: {EMPTY_STORE}.", highlight=False)
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


async def _board(
    services: Services, task_type: str | None, limit: int
) -> tuple[list[SkillEntry], float]:
    return await services.skill.board(task_type, limit), services.skill.rules.provisional_sd


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
