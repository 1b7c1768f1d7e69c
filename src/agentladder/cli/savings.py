"""``agentladder savings``: does routing pay? The routed gateway answers of a window, read
from the store, against always using each routing's reference: cost and judged quality,
overall and per task type, with 95% intervals (``GET /routing/savings``'s figures)."""

from __future__ import annotations

import functools
import time
from typing import Annotated

import typer
from rich.table import Table

from agentladder.cli.commands import app, console
from agentladder.cli.data import ConfigOpt, JsonOpt, StoreOpt, _print_json, _with_services
from agentladder.cli.shown import dollars
from agentladder.cli.stores import DbOpt, store_url
from agentladder.domain.routing.savings import RESAMPLES, CostSavings, QualitySavings
from agentladder.domain.routing.spec import MAX_SEED
from agentladder.errors import InvalidInput
from agentladder.services.routing.savings import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    SavingsReport,
    routing_savings,
)

__all__ = ["savings"]

NOTHING_ROUTED = (
    "No routed gateway answer in the last {days:g} days: a request whose model asks for a"
    " routing (route, route:<task_type>, an alias) is routed; one naming an agent is not"
    " (docs/gateway.md)."
)


@app.command()
def savings(
    days: Annotated[
        float, typer.Option(min=0.0, max=3650.0, help="The window: the last DAYS days.")
    ] = 7.0,
    limit: Annotated[
        int, typer.Option(min=1, max=MAX_LIMIT, help="The most answers read, newest first.")
    ] = DEFAULT_LIMIT,
    resamples: Annotated[
        int, typer.Option(min=100, max=10_000, help="Bootstrap resamples of the intervals.")
    ] = RESAMPLES,
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED, help="The resamples' seed.")] = 0,
    config: ConfigOpt = None,
    store: StoreOpt = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Does routing pay? The routed gateway answers of the last DAYS days against always
    using the best single agent (each routing's reference): what they cost against the
    same tokens at its prices, and how they were judged against its skill, overall and
    per task type, with 95% intervals (docs/routing.md, "Does routing pay?")."""
    if days <= 0:
        raise InvalidInput("--days", days, "must be more than 0")
    report: SavingsReport = _with_services(
        config, store_url(store, db),
        lambda s: routing_savings(s.store, now=time.time(), window_s=days * 86_400.0,
                                  limit=limit, resamples=resamples, seed=seed),
    )  # fmt: skip
    if as_json:
        _print_json(report.model_dump(mode="json"))
        return
    say = functools.partial(console.print, highlight=False, soft_wrap=True)
    if report.overall is None:
        say(NOTHING_ROUTED.format(days=days))
        return
    groups = [("overall", report.overall),
              *((g.task_type or "(none)", g) for g in report.task_types)]  # fmt: skip
    cost = _table(
        f"Cost of the routed gateway answers of the last {days:g} days against their"
        " references' prices for the same tokens (95% intervals)",
        ("task type", "routed", "by the reference", "cost", "at the reference's", "ratio"),
    )
    quality = _table(
        "Quality of the judged ones (scores less each judge's leniency) against the"
        " reference's skill",
        ("task type", "judged", "scores as given", "quality", "the reference's", "ratio"),
    )
    for name, group in groups:
        cost.add_row(
            name, str(group.requests), str(group.by_reference), dollars(group.cost.routed_usd),
            dollars(group.cost.reference_usd), _ratio(group.cost),
        )  # fmt: skip
        q = group.quality
        quality.add_row(
            name, str(q.judged), _number(q.mean_score), _number(q.routed),
            _number(q.reference), _ratio(q),
        )  # fmt: skip
    say(cost)
    say(quality)
    said = f"{report.direct} not routed (an agent named directly)"
    if report.uncosted:
        said += f"; {report.uncosted} routed without a recorded cost, left out"
    if report.truncated:
        said += f"; only the newest {report.limit} answers read"
    say(said + ".")
    for group in (report.overall, *report.task_types):
        for figures in (group.cost, group.quality):
            if figures.reason is not None:
                say(f"{group.task_type or 'overall'}: no ratio: {figures.reason}")


def _table(title: str, columns: tuple[str, ...]) -> Table:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold" if column == "task type" else "ellipsis")
    return table


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _ratio(figures: CostSavings | QualitySavings) -> str:
    if figures.ratio is None or figures.low is None or figures.high is None:
        return "-"
    return f"{figures.ratio:.3f} ({figures.low:.3f}-{figures.high:.3f})"
