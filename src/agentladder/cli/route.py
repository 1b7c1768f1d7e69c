"""``agentladder route``: the agents routing would choose for a task, and why; a warning
on stderr when no agent has evidence at the task type (a typo? the closest known ones)."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.table import Table
from typer import _click as click  # the click this Typer vendors (cli/oneline.py)

from agentladder.cli.commands import app, console
from agentladder.cli.data import ConfigOpt, JsonOpt, StoreOpt, _print_json, _with_services
from agentladder.cli.shown import dollars
from agentladder.cli.stores import DbOpt, store_url
from agentladder.domain.routing.spec import NotChosen, Pick, RouteSpec, Routing, Strategy
from agentladder.errors import InvalidInput, TooFewAgents

__all__ = ["HEALTH_UNSEEN", "Chosen", "route"]

HEALTH_UNSEEN = (
    "note: health and cooldowns are not seen here: they live in the memory of the serving"
    ' instance, from the provider calls it made (docs/routing.md, "Health"); an agent down'
    " or cooling down there is chosen here as if ok. `POST /route` on the server weighs them."
)
"""What ``route`` says on stderr: it reads the store, not the server's health."""


@app.command()
def route(
    task_type: Annotated[str, typer.Option(help="The task type to route.")],
    count: Annotated[int, typer.Option(help="How many agents (1: one task, one agent).")] = 1,
    budget: Annotated[
        float | None, typer.Option(help="The most one agent may cost per round.")
    ] = None,
    strategy: Annotated[Strategy, typer.Option(help="best, explore or cheapest_above.")] = (
        Strategy.BEST
    ),
    floor: Annotated[
        float | None, typer.Option(help="cheapest_above: the skill (0-10) to clear.")
    ] = None,
    floor_share: Annotated[
        float | None,
        typer.Option(
            help="cheapest_above: the floor as a share of the best available agent's skill"
            " (0.95: nearly the best, for less); instead of --floor."
        ),
    ] = None,
    confidence: Annotated[
        float | None,
        typer.Option(
            help="cheapest_above: the least probability of clearing the floor (default:"
            " routing.confidence)."
        ),
    ] = None,
    explore_share: Annotated[
        float | None,
        typer.Option(
            help="The expected share of picks spent exploring (routing default).",
        ),
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
    server: Annotated[
        str | None,
        typer.Option(
            help="Ask this server's POST /route (http://host:port) instead of reading the"
            " store: it weighs the health and cooldowns of the provider calls it made.",
        ),
    ] = None,
    token_env: Annotated[
        str, typer.Option(help="With --server: the environment variable holding the token.")
    ] = "AGENTLADDER_TOKEN",
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The agents to give a task of TASK_TYPE to, with why; the others with why not: read
    from the store, or asked of a running server (--server)."""
    spec = RouteSpec(
        count=count, task_type=task_type, tags=tuple(tag or ()), max_cost_per_round=budget,
        strategy=strategy, quality_floor=floor, quality_floor_share=floor_share,
        confidence=confidence, explore_share=explore_share, seed=seed,
    )  # fmt: skip
    if server is None:
        routing: Routing = _with_services(
            config, store_url(store, db), lambda s: s.routing.route(spec, online_only=online_only)
        )
        _warn(routing.warnings)
        if not routing.enough:
            raise TooFewAgents(
                [p.agent_id for p in routing.agents],
                [e.model_dump(mode="json") for e in routing.excluded],
                needed=count, what="the routing",
            )  # fmt: skip
        typer.echo(HEALTH_UNSEEN, err=True)
        chosen = Chosen(
            routing.seed, routing.agents, routing.excluded, routing.unlisted,
            routing.quality_floor, routing.confidence, routing.warnings,
        )  # fmt: skip
        shown = routing.model_dump(mode="json")
    else:
        given = [(name, v) for name, v in (("--config", config), ("--store", store), ("--db", db))]
        for name, value in given:
            if value is not None:
                raise InvalidInput(
                    name, str(value), "route --server asks the server, which reads its own store"
                )
        chosen, shown = _asked(server, token_env, spec, online_only)
        _warn(chosen.warnings)
    if as_json:
        _print_json(shown)
        return
    _print_tables(chosen, strategy, task_type)


def _warn(warnings: list[str]) -> None:
    """Each of the routing's warnings, one line on stderr (``warning: ...``)."""
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)


class Chosen:
    """What a routing chose and left out, read from the store or the server's answer."""

    def __init__(
        self, seed: int, agents: list[Pick], excluded: list[NotChosen], unlisted: int,
        floor: float | None = None, confidence: float | None = None,
        warnings: list[str] | None = None,
    ) -> None:  # fmt: skip
        self.seed = seed
        self.warnings = warnings or []
        self.agents = agents
        self.excluded = excluded
        self.unlisted = unlisted
        self.floor = floor
        self.confidence = confidence


def _asked(
    server: str, token_env: str, spec: RouteSpec, online_only: bool
) -> tuple[Chosen, dict[str, object]]:
    """The server's answer to ``POST /route``; its too_few_agents as the store's would be;
    another error as one line naming the server (and, for a 401, the token's variable)."""
    from agentladder import client  # noqa: PLC0415 (httpx only when asking a server)
    from agentladder.client.core import NO_TOKEN  # noqa: PLC0415

    token = os.environ.get(token_env) or None

    request = client.RouteRequest(**spec.model_dump(), online_only=online_only)
    try:
        with client.Ladder(server, token=token) as ladder:
            out = ladder.route(request)
    except client.TooFewAgents as error:
        excluded = [e.model_dump(mode="json") for e in error.excluded]
        raise TooFewAgents(
            error.qualified, excluded, needed=spec.count, what="the routing"
        ) from None
    except client.Unauthorized as error:
        where = (
            f"set {token_env}, or name another variable with --token-env"
            if token is None
            else f"the token is {token_env}'s"
        )
        told = str(error).removesuffix(NO_TOKEN)  # the variable is this command's way
        raise click.ClickException(f"--server {server}: {told} ({where})") from None
    except client.LadderError as error:
        raise click.ClickException(f"--server {server}: {error}") from None
    chosen = Chosen(
        out.seed,
        out.agents,
        out.excluded,
        out.unlisted,
        out.quality_floor,
        out.confidence,
        out.warnings,
    )
    return chosen, out.model_dump(mode="json")


def _print_tables(routing: Chosen, strategy: Strategy, task_type: str) -> None:
    floor = ""
    if routing.floor is not None:
        floor = f", floor {routing.floor:.2f} with probability {routing.confidence:g}"
    table = Table(title=f"{strategy.value} for {task_type} (seed {routing.seed}{floor})")
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
