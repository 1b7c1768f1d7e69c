"""One split of judged traffic replayed by every method at every relative floor: the points
(quality and cost over the best single agent's) that make each method's frontier, and the
checks against the targets.

Methods, per split (``replay_split``):

- ``<configuration> <confidence>``: ``POST /route`` through the services the history was
  imported into with that configuration (``CONFIGS``: the defaults, and the skill model
  with no allowance for wild scores), for each confidence;
- the variant rules of ``routing_variants`` on the default estimates (``likeliest``: the
  fallback before the reference always qualified) and the service's rule on plain
  per-category means (``rule on plain``), per confidence;
- ``plain means`` and the hindsight ``oracle`` (``routing_replay.plain_router``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.mt_bench_data import Judged, imported_services
from benchmarks.mt_bench_routing import Split
from benchmarks.routing_prices import Price
from benchmarks.routing_replay import (
    Choice,
    best_single,
    plain_router,
    register,
    routed,
    shortfall,
    tables,
    traffic,
)
from benchmarks.routing_variants import VARIANTS, current, plain_table

__all__ = [
    "CONFIGS",
    "DEFAULT_CONFIG",
    "FLOORS",
    "ORACLE",
    "PLAIN",
    "PLAIN_RULE",
    "TARGETS",
    "Outcome",
    "median_points",
    "median_shortfall",
    "meets",
    "method",
    "replay_split",
    "split_shortfall",
]

FLOORS = (0.80, 0.85, 0.90, 0.95, 0.97, 1.00)
TARGETS = {0.95: (0.95, 0.6), 0.90: (0.90, 0.3)}
"""Floor -> (least quality, most cost), both over the best single agent's."""
PLAIN, ORACLE = "plain means", "oracle"
PLAIN_RULE = "rule on plain"
DEFAULT_CONFIG = "agentladder"
CONFIGS: dict[str, dict[str, Any] | None] = {
    DEFAULT_CONFIG: None,
    "no wild scores": {"skill": {"outlier_share": 1e-6}},
}
"""Configurations the history is imported under: the defaults, and the skill model with
(almost) no chance that a score is arbitrary, so that a rare 1 counts in full."""

Point = tuple[float, float, float]
"""Quality ratio, cost ratio (per-round prices), cost ratio (per-answer estimate)."""
Interval = tuple[tuple[float, float], tuple[float, float]]


def method(name: str, confidence: float) -> str:
    return f"{name} {confidence:g}"


@dataclass
class Outcome:
    """One split's figures: per method and floor, the point, the choice, and (when asked)
    the bootstrap intervals; per routed method the picks not proven at their floor."""

    best: str
    types: int
    points: dict[str, dict[float, Point]] = field(default_factory=dict)
    intervals: dict[str, dict[float, Interval]] = field(default_factory=dict)
    choices: dict[str, dict[float, Choice]] = field(default_factory=dict)
    unproven: dict[str, int] = field(default_factory=dict)


async def replay_split(
    rows: Sequence[Judged],
    split: Split,
    folder: Path,
    prices: Mapping[str, Price],
    costs: Sequence[Callable[[Judged], float]],
    *,
    confidences: Sequence[float],
    seed: int,
    configs: Mapping[str, dict[str, Any] | None],
    draws: np.ndarray | None = None,
) -> Outcome:
    """Every method's points on one split (``costs``: the per-round cost, then any other
    estimate; intervals on the first, when ``draws`` are given)."""
    history = [r for r in rows if r.question_id in split.history]
    held = [r for r in rows if r.question_id in split.held_out]
    types = sorted({r.category for r in rows})
    out = Outcome(best_single(history), len(types))
    methods: dict[str, dict[float, Choice]] = {}
    for name, config in configs.items():
        sub = folder / name.replace(" ", "-")
        sub.mkdir()
        async with imported_services(history, sub, config) as services:
            await register(services, prices)
            picks = await routed(services, types, FLOORS, confidences, seed=seed)
            seen = await tables(services, types)
        for k in confidences:
            methods[method(name, k)] = {
                f: {t: picks[(k, f)][t].agent for t in types} for f in FLOORS
            }
            out.unproven[method(name, k)] = sum(
                not picks[(k, f)][t].proven for f in FLOORS for t in types
            )
            for f in FLOORS:
                for t in types:  # the restated rule picks what the service picked
                    if current(seen[t], f, k) != picks[(k, f)][t].agent:
                        raise RuntimeError(f"the restated rule differs at {t}, {f}, {k}")
        if name != DEFAULT_CONFIG:
            continue
        plain = plain_table(seen, history)
        for label, rule in VARIANTS.items():
            for k in confidences:
                methods[method(label, k)] = {
                    f: {t: rule(seen[t], f, k) for t in types} for f in FLOORS
                }
        for k in confidences:
            methods[method(PLAIN_RULE, k)] = {
                f: {t: current(plain[t], f, k) for t in types} for f in FLOORS
            }
    methods[PLAIN] = {f: plain_router(history, prices, f) for f in FLOORS}
    methods[ORACLE] = {f: plain_router(held, prices, f) for f in FLOORS}
    traffics = [traffic(held, cost) for cost in costs]
    for name, by_floor in methods.items():
        out.choices[name] = by_floor
        for floor, choice in by_floor.items():
            quality, cost = traffics[0].ratios(choice, out.best)
            other = traffics[-1].ratios(choice, out.best)[1]
            out.points.setdefault(name, {})[floor] = (quality, cost, other)
            if draws is not None:
                out.intervals.setdefault(name, {})[floor] = traffics[0].intervals(
                    choice, out.best, draws
                )
    return out


def meets(quality: float, cost: float, floor: float) -> bool:
    """The point meets the floor's target (a floor without one: true)."""
    target = TARGETS.get(floor)
    return target is None or (quality >= target[0] and cost <= target[1])


def median_points(outcomes: Sequence[Outcome], name: str) -> dict[float, Point]:
    """Per floor, the medians over the splits of each coordinate."""
    return {
        f: (
            statistics.median(o.points[name][f][0] for o in outcomes),
            statistics.median(o.points[name][f][1] for o in outcomes),
            statistics.median(o.points[name][f][2] for o in outcomes),
        )
        for f in FLOORS
    }


def _curve(points: Mapping[float, Point]) -> list[tuple[float, float]]:
    return [(points[f][1], points[f][0]) for f in FLOORS]


def split_shortfall(outcome: Outcome, name: str, against: str = PLAIN) -> float:
    """``routing_replay.shortfall`` of the method's frontier against another's, on one
    split (per-round costs)."""
    return shortfall(_curve(outcome.points[name]), _curve(outcome.points[against]))


def median_shortfall(outcomes: Sequence[Outcome], name: str, against: str = PLAIN) -> float:
    """The same on the curves of the medians over the splits."""
    return shortfall(
        _curve(median_points(outcomes, name)), _curve(median_points(outcomes, against))
    )
