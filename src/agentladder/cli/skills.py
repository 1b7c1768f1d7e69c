"""``agentladder skills``: the evidence model's board, with intervals and tiers."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from agentladder.cli.commands import app, console
from agentladder.cli.data import ConfigOpt, JsonOpt, StoreOpt, _print_json, _with_services
from agentladder.cli.stores import DbOpt, store_url

__all__ = ["skills"]


@app.command()
def skills(
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    task_type: Annotated[str | None, typer.Option(help="One task type (default: overall).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Agents by skill (0-10) with 95% intervals, tiers and provisional estimates marked."""
    rows = _with_services(config, store_url(store, db), lambda s: s.skill.board(task_type, limit))
    if as_json:
        _print_json({"task_type": task_type, "entries": [r.model_dump(mode="json") for r in rows]})
        return
    title = f"Skill{' at ' + task_type if task_type else ' overall'} (95% intervals; tier 1 "
    table = Table(title=title + "overlaps the best)")
    for column in ("tier", "agent", "skill", "interval", "sd", "observations", ""):
        table.add_column(column)
    for r in rows:
        table.add_row(
            str(r.tier), r.agent_id, f"{r.skill:.2f}", f"{r.low:.2f}-{r.high:.2f}",
            f"{r.sd:.2f}", str(r.observations), "provisional" if r.provisional else "",
        )  # fmt: skip
    console.print(table)
