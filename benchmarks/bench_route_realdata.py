"""Does routing pay on real judged traffic? Public MT-bench judgments of 10 priced models
(``mt_bench_routing.py``, prices in ``routing_prices.py``) replayed with held-out splits,
and a simulated fleet of 30 agents and 10 task types.

**Replay** (``routing_replay.py``, ``routing_frontier.py``). History: the judgments (both
turns) of half of the questions, imported as ``agentladder import --scale 1-10`` imports
them (fit included), every model registered with its prices; held out: the other half.
Per category (task type), one ``POST /route`` through the real ``RoutingService.route``:
``count`` 1, ``cheapest_above``, ``quality_floor_share`` f for f in ``FLOORS``,
``explore_share`` 0, for each ``confidence`` in ``CONFIDENCES``; the chosen agent answers
every held-out question of the category (quality: its held-out scores, 0-10; cost: its
prices). Against the best single agent (the highest history mean overall, always used):
quality and cost ratios over the held-out questions, bootstrap 95% intervals over
questions (``BOOTSTRAP`` resamples, seeded) on the first split. Beside it on the same
split: the plain-means router (per category the cheapest agent whose history mean is at
least f of the best history mean there), the hindsight oracle (the same on the held-out
means), variant rules and a variant configuration (``routing_frontier.py``). Splits: odd
question ids as history, the swap, and ``ROUTE_REALDATA_SPLITS`` (20) seeded random halves
of each category; medians and spread over all of them.

Targets: at a 95% floor, quality >= 0.95 of the best single agent at <= 0.6 of its cost; at
90%, >= 0.90 at <= 0.3; never more cost than the best single agent at any floor; the
frontier at least the plain-means router's everywhere (``routing_replay.shortfall`` <= 0).

**Simulated fleet** (``routing_fleet.py``, ``routing_stream.py``): the same static replay
(a history, then ``FLEET_EVAL`` held-out requests of every type), and streams of
``ROUTE_FLEET_REQUESTS`` (1000) routed requests (``cheapest_above`` at 0.95; ``STREAMS``:
the default confidence with ``explore_share`` 0.1 and 0, to show what exploring buys, and
confidence 0.7 with 0.1) whose judged answers are fed back and fitted every
``FIT_EVERY``: quality and cost against the best single agent, and per task type the
requests before a cheaper agent than the type's reference is proven; medians over
``ROUTE_FLEET_SEEDS`` (5) seeds.

The judgments are public data of other projects, not in this repository: read from
``shared/data/mt_bench/routing_judgments.jsonl`` beside the repository or
``MT_BENCH_ROUTING_JUDGMENTS``; without them the replay says so and the fleet still runs.
``ROUTE_REALDATA_QUICK=1``: 4 random splits, 200 resamples, 2 fleet seeds of 300 requests.

    .venv/bin/python -m benchmarks route_realdata
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from agentladder.domain.routing.rules import RoutingRules
from agentladder.domain.scales import to_ten
from benchmarks.mt_bench_data import Judged, plain_means
from benchmarks.mt_bench_routing import Answers, Split, answers, path, splits
from benchmarks.routing_fleet import TYPES, make_fleet
from benchmarks.routing_frontier import (
    CONFIGS,
    DEFAULT_CONFIG,
    FLOORS,
    ORACLE,
    PLAIN,
    TARGETS,
    Outcome,
    median_points,
    median_shortfall,
    meets,
    method,
    replay_split,
    split_shortfall,
)
from benchmarks.routing_prices import PRICES, Price, answer_cost
from benchmarks.routing_stream import Stream, run_stream

QUICK = os.environ.get("ROUTE_REALDATA_QUICK", "") not in ("", "0")
CONFIDENCES = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9, 0.975)
DEFAULT = RoutingRules().confidence
RANDOM_SPLITS = int(os.environ.get("ROUTE_REALDATA_SPLITS", "4" if QUICK else "20"))
BOOTSTRAP = 200 if QUICK else 2000
SEED = 7
FLEET_SEEDS = int(os.environ.get("ROUTE_FLEET_SEEDS", "2" if QUICK else "5"))
FLEET_REQUESTS = int(os.environ.get("ROUTE_FLEET_REQUESTS", "300" if QUICK else "1000"))
FLEET_SHARE = 0.95
FLEET_EXPLORE = 0.1
STREAMS = ((DEFAULT, FLEET_EXPLORE), (DEFAULT, 0.0), (0.7, FLEET_EXPLORE))
"""The streams run on each seed: (confidence, explore_share)."""
FLEET_EVAL = 20
FIT_EVERY = 20
SHOWN = (method(DEFAULT_CONFIG, DEFAULT), PLAIN, ORACLE)


def _spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def _print_models(data: Answers, prices: Mapping[str, Price]) -> None:
    means = plain_means(data.rows)
    overall = {m: v for (m, scope), v in means.items() if scope is None}
    print(f"{len(data.rows)} judgments of {len(overall)} models (mean on 0-10)")
    print(f"{'model':<34} {'mean':>5} {'$/round':>8}  priced as")
    for model in sorted(overall, key=lambda m: (-prices[m].per_round, -overall[m])):
        p = prices[model]
        print(f"{model:<34} {overall[model]:5.2f} {p.per_round:8.5f}  {p.provider}:"
              f" {p.listed_as} ${p.input:g}/${p.output:g}")  # fmt: skip


def _print_first(outcome: Outcome, title: str) -> None:
    print(f"\n{title}: best single agent {outcome.best}; ratios to it: quality, cost (per-round"
          " prices) with bootstrap 95% intervals, cost from the answers' lengths")  # fmt: skip
    print(f"{'floor':>5}  {'method':<17} {'quality':>7} {'interval':>15} {'cost':>6}"
          f" {'interval':>15} {'answers':>7}  picks, categories in name order")  # fmt: skip
    for floor in FLOORS:
        for name in SHOWN:
            q, c, e = outcome.points[name][floor]
            (ql, qh), (cl, ch) = outcome.intervals[name][floor]
            picks = " ".join(a[:10] for _, a in sorted(outcome.choices[name][floor].items()))
            print(f"{floor:5.2f}  {name:<17} {q:7.3f} [{ql:.3f}, {qh:.3f}] {c:6.3f}"
                  f" [{cl:.3f}, {ch:.3f}] {e:7.3f}  {picks}")  # fmt: skip


def _print_spread(outcomes: Sequence[Outcome], answers_cost: bool, over: str) -> None:
    print(f"\nover {len(outcomes)} {over}: median (min-max) of the ratios to the best single"
          " agent")  # fmt: skip
    tail = f" {'answers':>7}" if answers_cost else ""
    print(f"{'floor':>5}  {'method':<17} {'quality':>23} {'cost':>23}{tail}")
    for floor in FLOORS:
        for name in SHOWN:
            qs = [o.points[name][floor][0] for o in outcomes]
            cs = [o.points[name][floor][1] for o in outcomes]
            es = [o.points[name][floor][2] for o in outcomes]
            tail = f" {statistics.median(es):7.3f}" if answers_cost else ""
            print(f"{floor:5.2f}  {name:<17} {_spread(qs):>23} {_spread(cs):>23}{tail}")
    bests = sorted({o.best for o in outcomes})
    print(f"best single agent of the {over}: {', '.join(bests)}")


def _print_sweep(outcomes: Sequence[Outcome], over: str) -> None:
    n, picks = len(outcomes), len(FLOORS) * outcomes[0].types
    print(f"\nfrontiers: median quality/cost (per round) over the {over} at each floor; targets"
          f" (in parentheses, {over} meeting each): 0.95 floor >= 0.95 at <= 0.6; 0.90"
          " floor >= 0.90 at <= 0.3; cost <= 1 at every floor; shortfall against plain"
          " means <= 0")  # fmt: skip
    head = " ".join(f"{f:>11.2f}" for f in FLOORS)
    print(f"{'method':<20} {head}  {'95%':>7} {'90%':>7} {'cost<=1':>7} {'shortfall':>14}"
          f" unproven/{picks}")  # fmt: skip
    for name in outcomes[0].points:
        med = median_points(outcomes, name)
        cells = " ".join(f"{med[f][0]:.3f}/{med[f][1]:.3f}" for f in FLOORS)
        line = f"{name:<20} {cells} "
        for floor in TARGETS:
            ok = meets(med[floor][0], med[floor][1], floor)
            count = sum(meets(*o.points[name][floor][:2], floor) for o in outcomes)
            line += f" {'yes' if ok else 'NO':>3}({count:>2})"
        cheap = all(med[f][1] <= 1.0 for f in FLOORS)
        count = sum(all(o.points[name][f][1] <= 1.0 for f in FLOORS) for o in outcomes)
        line += f"     {'yes' if cheap else 'NO':>3}({count:>2})"
        if name not in (PLAIN, ORACLE):
            ok_splits = sum(split_shortfall(o, name) <= 1e-9 for o in outcomes)
            line += f" {median_shortfall(outcomes, name):+8.3f}({ok_splits:>2})"
        if name in outcomes[0].unproven:
            line += f"  {statistics.median(o.unproven[name] for o in outcomes):g}"
        print(line)
    print(f"(of {n} {over}; shortfall: the most a plain-means point's quality exceeds every"
          " point of ours that costs no more, on the median curves; unproven: picks not"
          " proven at their floor, median)")  # fmt: skip


def _costs(data: Answers, prices: Mapping[str, Price]) -> list[Callable[[Judged], float]]:
    def per_round(r: Judged) -> float:
        return prices[r.model].per_round

    def per_answer(r: Judged) -> float:
        return answer_cost(prices[r.model], *data.lengths[(r.model, r.question_id, r.turn)])

    return [per_round, per_answer]


async def _replay(data: Answers) -> list[Outcome]:
    prices = {m: PRICES[m] for m in sorted({r.model for r in data.rows})}
    outcomes = []
    with tempfile.TemporaryDirectory() as folder:
        for k, split in enumerate(splits(data.rows, RANDOM_SPLITS, SEED)):
            draws = None
            if k == 0:
                size = len(split.held_out)
                draws = np.random.default_rng(SEED).integers(0, size, (BOOTSTRAP, size))
            sub = Path(folder) / str(k)
            sub.mkdir()
            outcomes.append(await replay_split(
                data.rows, split, sub, prices, _costs(data, prices), confidences=CONFIDENCES,
                seed=SEED, configs=CONFIGS, draws=draws,
            ))  # fmt: skip
    return outcomes


def realdata() -> None:
    """The replay of the public judgments."""
    data = answers()
    if data is None:
        print(f"the MT-bench routing judgments are not at {path()}:"
              " set MT_BENCH_ROUTING_JUDGMENTS")  # fmt: skip
        return
    start = time.perf_counter()
    _print_models(data, PRICES)
    outcomes = asyncio.run(_replay(data))
    _print_first(outcomes[0], "odd question ids as history, even held out")
    _print_spread(outcomes, answers_cost=True, over="splits")
    _print_sweep(outcomes, over="splits")
    print(f"replay: {len(outcomes)} splits in {time.perf_counter() - start:.0f} s")


async def _fleet(
    seeds: Sequence[int],
) -> tuple[list[Outcome], dict[tuple[float, float], list[Stream]]]:
    replays: list[Outcome] = []
    streams: dict[tuple[float, float], list[Stream]] = {run: [] for run in STREAMS}
    with tempfile.TemporaryDirectory() as folder:
        for seed in seeds:
            fleet = make_fleet(seed)
            history, held = fleet.history(), fleet.evaluation(FLEET_EVAL)
            prices = {a.name: a.price for a in fleet.agents}
            split = Split(
                "fleet",
                frozenset(r.question_id for r in history),
                frozenset(r.question_id for r in held),
            )

            def per_round(r: Judged, prices: Mapping[str, Price] = prices) -> float:
                return prices[r.model].per_round

            sub = Path(folder) / f"{seed}"
            sub.mkdir()
            replays.append(await replay_split(
                history + held, split, sub, prices, [per_round], confidences=CONFIDENCES,
                seed=SEED, configs={DEFAULT_CONFIG: None},
            ))  # fmt: skip
            for confidence, share in STREAMS:
                place = sub / f"stream-{confidence}-{share}"
                place.mkdir()
                streams[(confidence, share)].append(await run_stream(
                    fleet, place, requests=FLEET_REQUESTS, share=FLEET_SHARE,
                    explore_share=share, confidence=confidence, fit_every=FIT_EVERY, seed=seed,
                ))  # fmt: skip
    return replays, streams


def _until(streams: Sequence[Stream], task_type: str) -> str:
    """The median over seeds of the requests before a cheaper agent is proven (never
    counts as more than any), and in how many seeds it happened."""
    values = [s.until_proven[task_type] for s in streams]
    happened = sum(v is not None for v in values)
    ranked = sorted(values, key=lambda v: float("inf") if v is None else v)
    middle = ranked[(len(ranked) - 1) // 2]
    return f"{'never' if middle is None else middle}({happened})"


def _truly_within(seed: int, stream: Stream) -> tuple[int, int]:
    """Of the agents first proven per type in ``stream``, how many are truly within
    ``FLEET_SHARE`` of the type's truly best agent (0-10 scale), and how many there are."""
    agents = make_fleet(seed).agents
    within = 0
    for task_type, agent in stream.proven_agent.items():
        best = max(to_ten(a.quality[task_type], "1-10") for a in agents)
        mine = next(a for a in agents if a.name == agent).quality[task_type]
        within += to_ten(mine, "1-10") >= FLEET_SHARE * best
    return within, len(stream.proven_agent)


def fleet() -> None:
    """The simulated fleet: its static replay, and the streams with and without
    exploration."""
    start = time.perf_counter()
    seeds = list(range(FLEET_SEEDS))
    replays, streams = asyncio.run(_fleet(seeds))
    print(f"\nsimulated fleet: 30 agents, 10 task types, seeds {seeds[0]}-{seeds[-1]}; static"
          f" replay of the history on {FLEET_EVAL} held-out requests per type")  # fmt: skip
    _print_spread(replays, answers_cost=False, over="seeds")
    _print_sweep(replays, over="seeds")
    print(f"\nstreams: {FLEET_REQUESTS} requests, cheapest_above at {FLEET_SHARE}, a fit every"
          f" {FIT_EVERY}; median (min-max) over the seeds of the ratios to the best single"
          " agent on the same requests")  # fmt: skip
    label = {run: f"confidence {run[0]:g}, explore {run[1]:g}" for run in STREAMS}
    for run, done in streams.items():
        q = [s.quality_ratio for s in done]
        c = [s.cost_ratio for s in done]
        e = [s.explored / s.requests for s in done]
        print(f"{label[run]:<26} quality {_spread(q)}  cost {_spread(c)}"
              f"  explored {statistics.median(e):.3f}")  # fmt: skip
    print("requests of a type routed before a cheaper agent than the type's reference is"
          " proven (median over the seeds, never counted as more; in parentheses, the seeds"
          " where it was)")  # fmt: skip
    print(f"{'':<26} " + " ".join(f"{t:>9}" for t in TYPES) + "  truly within")
    for run, done in streams.items():
        cells = " ".join(f"{_until(done, t):>9}" for t in TYPES)
        within = [_truly_within(seed, s) for seed, s in zip(seeds, done, strict=True)]
        print(f"{label[run]:<26} {cells}  {sum(w for w, _ in within)} of"
              f" {sum(n for _, n in within)}")  # fmt: skip
    print("(truly within: of the agents first proven, those whose true quality at the type"
          f" is at least {FLEET_SHARE} of the truly best agent's there)")  # fmt: skip
    print(f"fleet: {time.perf_counter() - start:.0f} s")


def main() -> None:
    realdata()
    fleet()
