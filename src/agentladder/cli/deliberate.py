"""``agentladder deliberate``: one deliberation among configured agents, run here.

It shows who took part and who was excluded (with the reason), each agent's score, the
winning answer, what the deliberation cost and who was promoted. Fewer than two qualified
agents is one line on stderr naming each excluded agent and why, exit 1.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from agentladder.cli.commands import app, console
from agentladder.cli.data import ConfigOpt, JsonOpt, StoreOpt, _print_json, _with_services
from agentladder.cli.progress import Calls, Reporting
from agentladder.cli.stores import CreateOpt, DbOpt, store_url
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.errors import TooFewAgents
from agentladder.services.container import Services

__all__ = ["deliberate", "excluded_text"]


def excluded_text(excluded: list[dict[str, Any]]) -> str:
    """``sim_a (rank 0, below_min_rank), sim_c (rank 0, down: until 14:03:12 UTC ...)``."""
    return ", ".join(
        f"{e['agent_id']} (rank {e['rank']}, {e['reason']}"
        + (f": {e['detail']}" if e.get("detail") else "")
        + ")"
        for e in excluded
    )


@app.command()
def deliberate(
    ctx: typer.Context,
    user_query: Annotated[
        str, typer.Argument(metavar="USER_QUERY", help="The question (the API's user_query).")
    ],
    agent: Annotated[list[str], typer.Option("--agent", help="An agent (2 or more).")],
    scope: Annotated[str, typer.Option(help="quick, standard or deep.")] = "standard",
    min_agent_rank: Annotated[int, typer.Option(min=0)] = 0,
    task_type: Annotated[
        str | None, typer.Option(help="The task type (judged and ranked under it).")
    ] = None,
    complexity: Annotated[
        str | None,
        typer.Option(help="simple, medium or complex: agents not allowed it are excluded."),
    ] = None,
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    create: CreateOpt = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="No progress on stderr while it runs.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run one deliberation among configured agents: who took part and who was excluded
    (and why), the scores, the winning answer, the cost and who was promoted; its
    progress on stderr while it runs (a line per round)."""
    request = DeliberationRequest.model_validate(
        {"user_query": user_query, "agent_names": agent, "scope": scope,
         "min_agent_rank": min_agent_rank, "task_type": task_type, "complexity": complexity}
    )  # fmt: skip
    err = Console(stderr=True, highlight=False, soft_wrap=True)

    async def work(services: Services) -> dict[str, Any]:
        orchestrator = services.orchestrator
        rounds = orchestrator.settings.scope_rounds.get(request.scope.value, 1)
        live = err.is_terminal and not quiet  # a live line per call on a terminal only
        status = err.status("deliberating") if live else contextlib.nullcontext()
        with status as shown:
            calls = Calls(rounds, _silent if quiet else err.print, shown.update if shown else None)
            inner = dict(orchestrator.providers)
            orchestrator.providers = {a: Reporting(p, calls) for a, p in inner.items()}
            try:
                record = await orchestrator.run(request)
            finally:
                orchestrator.providers = inner
                calls.finish()
        await orchestrator.settle()
        return record.model_dump(mode="json", exclude={"submissions"})

    try:
        record = _with_services(config, store_url(store, db), work, create=create)
    except TooFewAgents as error:
        if ctx.find_root().params.get("debug"):
            raise  # agentladder --debug: the error itself, with its traceback
        typer.echo(f"error: {error}; excluded: {excluded_text(error.excluded)}", err=True)
        raise typer.Exit(1) from error
    if as_json:
        _print_json(record)
        return
    _show(record)


def _silent(_: str) -> None:
    """--quiet: no progress."""


def _show(record: dict[str, Any]) -> None:
    say = console.print
    say(f"deliberation {record['id']}: {record['status']}", highlight=False)
    say(f"agents: {', '.join(record['agents'])}", highlight=False)
    if record["excluded"]:
        say(f"excluded: {excluded_text(record['excluded'])}", highlight=False)
    for agent_id, score in record["scores"].items():
        say(f"  {agent_id}: {'-' if score is None else f'{score:.2f}'}", highlight=False)
    result = record["result"]
    if result is not None:
        score = result["aggregated_score"]
        shown = "-" if score is None else f"{score:.2f}"
        say(f"answer (by {result['agent_id']}, score {shown}):", highlight=False)
        say(escape(result["content"] or ""), highlight=False, soft_wrap=True)
    else:
        say("answer: none (no proposal was scored)")
    say(f"cost: ${record['total_cost']:.4f}", highlight=False)
    ranking = record["ranking"]
    say(f"promoted: {', '.join(ranking['promoted']) or 'nobody'}", highlight=False)
    if ranking.get("explanation"):
        say(f"  why: {escape(ranking['explanation'])}", highlight=False)
