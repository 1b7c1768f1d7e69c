"""``agentladder route``: the agents routing would choose for a task, and why."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from agentladder.cli.commands import app, console
from agentladder.cli.data import ConfigOpt, JsonOpt, StoreOpt, _print_json, _with_services
from agentladder.cli.shown import dollars
from agentladder.cli.stores import DbOpt, store_url
from agentladder.domain.routing.spec import RouteSpec, Routing, Strategy
from agentladder.errors import TooFewAgents

__all__ = ["HEALTH_UNSEEN", "route"]

HEALTH_UNSEEN = (
    "note: health and cooldowns are not seen here: they live in the memory of the serving"
    ' instance, from the provider calls it made (docs/routing.md, "Health"); an agent down'
    " or cooling down there is chosen here as if ok. `POST /route` on the server weighs them."
)
"""What ``route`` says on stderr: it reads the store, not the server's health."""


@app.command()
def route(
    task_type: Annotated[str, typer.Option(help="The task type to route.")],
    count: Annotated[int, typer.Option(help="How many agents.")] = 2,
    budget: Annotated[
        float | None, typer.Option(help="The most one agent may cost per round.")
    ] = None,
    strategy: Annotated[Strategy, typer.Option(help="best, explore or cheapest_above.")] = (
        Strategy.BEST
    ),
    floor: Annotated[
        float | None, typer.Option(help="cheapest_above: the lower bound to clear.")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="A tag every agent declares.")] = None,
    seed: Annotated[int | None, typer.Option(help="Repeat a choice.")] = None,
    online_only: Annotated[
        bool,
        typer.Option(
            "--online-only",
            help="Only agents heartbeating now (default: also agents known by their evidence,"
            " such as imported history, for work you run yourself).",
        ),
    ] = False,
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The agents to give a task of TASK_TYPE to, with why; the others with why not."""
    spec = RouteSpec(
        count=count, task_type=task_type, tags=tuple(tag or ()), max_cost_per_round=budget,
        strategy=strategy, quality_floor=floor, seed=seed,
    )  # fmt: skip
    routing: Routing = _with_services(
        config, store_url(store, db), lambda s: s.routing.route(spec, online_only=online_only)
    )
    if not routing.enough:
        raise TooFewAgents(
            [p.agent_id for p in routing.agents],
            [e.model_dump(mode="json") for e in routing.excluded],
            needed=count,
        )
    typer.echo(HEALTH_UNSEEN, err=True)
    if as_json:
        _print_json(routing.model_dump(mode="json"))
        return
    table = Table(title=f"{strategy.value} for {task_type} (seed {routing.seed})")
    for column in ("agent", "skill", "sd", "lower bound", "cost/round", "p90 ms", "why"):
        table.add_column(column, overflow="fold" if column == "agent" else "ellipsis")
    for p in routing.agents:
        p90 = "-" if p.latency_p90_ms is None else f"{p.latency_p90_ms:.0f}"
        table.add_row(
            p.agent_id, f"{p.skill:.2f}", f"{p.sd:.2f}", f"{p.low:.2f}",
            dollars(p.estimated_cost_per_round), p90, p.detail,
        )  # fmt: skip
    console.print(table)
    left = Table(title=f"Not chosen ({routing.unlisted} more not listed)")
    for column in ("agent", "reason", "detail"):
        left.add_column(column, overflow="fold" if column == "agent" else "ellipsis")
    for e in routing.excluded:
        left.add_row(e.agent_id, e.reason.value, e.detail)
    console.print(left)
