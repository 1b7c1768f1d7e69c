"""Choosing agents for a task: ``route(table, spec, ...)``, a pure function.

Every agent is first checked against the rules, in this order (the first that applies is
its reason): offline, unreachable (this server cannot ask it), down (its provider calls
show it cannot work now), complexity (its level at the task type may not take it),
below_min_rank, level (below ``min_level``), tags (lacks one asked for), cost (above
``max_cost_per_round``, or no declared prices when a cap is set), and for cheapest_above
below_quality_floor (its probability of clearing the floor under ``confidence``). A
degraded agent comes with its skill, sd and lower bound already multiplied by the share
of calls it answers (its expected delivered quality: the service does it). Among those
left:

- ``best``: the highest lower bounds (the skill's 95% lower bound, the conservative
  estimate);
- ``cheapest_above``: the cheapest proven to clear the floor (``quality_floor``, or
  ``quality_floor_share`` of the reference's skill: the reference is the highest lower
  bound among the agents that pass every rule but the floor): proven when the posterior
  probability that its skill clears the floor is at least ``confidence`` (``Floor``); of
  its picks, up to ``explore_slots`` go to cheaper agents not yet proven where the next
  ``explore_horizon`` judged answers would most likely prove a saving (``Floor.
  p_proven_after`` times the saving per round), unless settled (sd at most
  ``explore_min_sd``) or shown not to reach the floor; when fewer than ``count`` are
  proven, the places left go to the agents likeliest to clear the floor among those
  whose 95% interval reaches it, marked so. docs/routing.md, "The decision rule";
- ``explore``: best's picks, of which up to ``explore_slots`` are given to agents
  whose Thompson draw (a sample of the skill posterior, mean plus sd times a standard
  normal cut at ``explore_tail_sd``) places them among the ``count`` highest draws
  (drawn for every agent at once with numpy: ``_draws``).

The slots (explore, cheapest_above) are ``floor(explore_share * count + u)``, ``u``
uniform in [0, 1) (the request's ``explore_share``, else ``max_explore_share``): in
expectation at most that share of the picks explore.

Ties on a strategy's key at the last place are drawn with the seed; the same table,
request and seed give the same picks. The table (``routing_table``) holds the agents in
each strategy's order, so a choice walks only as far as it must: past the picks it lists
up to ``max_listed`` agents left out, each with its reason, and counts the rest; when
fewer than ``count`` qualify, every agent left out is listed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from agentladder.domain.levels import LEVELS
from agentladder.domain.privileges import allows_complexity
from agentladder.domain.routing.floor import Z95, Floor
from agentladder.domain.routing.rules import RoutingRules
from agentladder.domain.routing.spec import (
    ExclusionCode,
    NotChosen,
    Pick,
    Reference,
    RouteSpec,
    Routing,
    Strategy,
)
from agentladder.domain.routing.table import Candidate, RoutingTable, routing_table
from agentladder.domain.rules import Complexity
from agentladder.domain.stats import window_percentile

__all__ = ["Candidate", "RoutingTable", "route", "routing_table"]

Check = Callable[[Candidate], ExclusionCode | None]


def _first(order: Sequence[Candidate], check: Check) -> Candidate | None:
    """The first agent of ``order`` that passes ``check`` (read by index: a projected
    order builds only the agents read)."""
    for i in range(len(order)):
        c = order[i]
        if check(c) is None:
            return c
    return None


def _floor(spec: RouteSpec, reference: Candidate | None, rules: RoutingRules) -> Floor | None:
    """cheapest_above's floor: ``quality_floor``, or ``quality_floor_share`` of the
    reference's skill (none qualifies: no floor, since no agent passes the other rules)."""
    if spec.strategy is not Strategy.CHEAPEST_ABOVE:
        return None
    confidence = spec.confidence if spec.confidence is not None else rules.confidence
    if spec.quality_floor is not None:
        return Floor(spec.quality_floor, confidence)
    share = spec.quality_floor_share or 1.0
    if reference is None:
        return None
    return Floor(round(share * reference.skill, 6), confidence, share, reference.agent_id)


def _limits(spec: RouteSpec) -> tuple[frozenset[str], float | None, int | None]:
    """The request's limits as the rules test them: the tags asked for, the cost cap and
    the least level's index."""
    least = None if spec.min_level is None else LEVELS.index(spec.min_level)
    return frozenset(spec.tags), spec.max_cost_per_round, least


def _checker(
    spec: RouteSpec, complexity: Complexity | None, min_rank: int, floor: Floor | None
) -> Check:
    tags, cap, least = _limits(spec)

    def check(c: Candidate) -> ExclusionCode | None:
        if not c.online:
            return ExclusionCode.OFFLINE
        if not c.reachable:
            return ExclusionCode.UNREACHABLE
        if c.down is not None:
            return ExclusionCode.DOWN
        if complexity is not None and not allows_complexity(c.max_complexity, complexity):
            return ExclusionCode.COMPLEXITY
        if c.rank < min_rank:
            return ExclusionCode.BELOW_MIN_RANK
        if least is not None and LEVELS.index(c.level) < least:
            return ExclusionCode.LEVEL
        if tags and not tags <= c.tags:
            return ExclusionCode.TAGS
        if cap is not None and c.cost > cap:
            return ExclusionCode.COST
        if floor is not None and not floor.clears(c):
            return ExclusionCode.BELOW_QUALITY_FLOOR
        return None

    return check


Eligible = Callable[[Candidate], bool]


def _eligible(spec: RouteSpec, complexity: Complexity | None, min_rank: int) -> Eligible:
    """``check(c) is None`` of ``_checker``'s check (explore's: no floor), as one test with
    the rules most likely to fail first (the tags asked for, then status), for the
    Thompson draws, which need no reason and visit hundreds of agents per routing."""
    tags, cap, least = _limits(spec)

    def eligible(c: Candidate) -> bool:
        return (
            (not tags or tags <= c.tags)
            and c.online
            and c.reachable
            and c.down is None
            and (cap is None or c.cost <= cap)
            and c.rank >= min_rank
            and (least is None or LEVELS.index(c.level) >= least)
            and (complexity is None or allows_complexity(c.max_complexity, complexity))
        )

    return eligible


@dataclass
class _Walk:
    """One walk of an order: the picks, and the agents passed over with their reason."""

    picks: list[Candidate]
    passed: list[tuple[Candidate, ExclusionCode]]
    walked: int


def _walk(
    order: Sequence[Candidate],
    key: Callable[[Candidate], object],
    check: Check,
    count: int,
    rng: random.Random,
    listed: int,
) -> _Walk:
    picks: list[Candidate] = []
    passed: list[tuple[Candidate, ExclusionCode]] = []
    size = len(order)
    i = 0
    while i < size and len(picks) < count:
        c = order[i]
        i += 1
        why = check(c)
        if why is None:
            picks.append(c)
        else:
            passed.append((c, why))
    if len(picks) == count:  # ties at the last place: drawn with the seed
        edge = key(picks[-1])
        tied = [p for p in picks if key(p) == edge]
        extra = []
        while i < size and key(order[i]) == edge:
            c = order[i]
            i += 1
            why = check(c)
            if why is None:
                extra.append(c)
            else:
                passed.append((c, why))
        if extra:
            pool = tied + extra
            rng.shuffle(pool)
            kept = {id(c) for c in pool[: len(tied)]}
            untied = [p for p in picks if key(p) != edge]
            picks = untied + [c for c in tied + extra if id(c) in kept]
            passed.extend((c, ExclusionCode.NOT_CHOSEN) for c in pool[len(tied) :])
    while i < size and len(passed) < listed:
        c = order[i]
        i += 1
        passed.append((c, check(c) or ExclusionCode.NOT_CHOSEN))
    return _Walk(picks, passed, i)


def _detail(
    code: ExclusionCode,
    c: Candidate,
    spec: RouteSpec,
    complexity: Complexity | None,
    min_rank: int,
    last: Candidate | None,
    floor: Floor | None,
) -> str:
    if code is ExclusionCode.OFFLINE:
        if not c.registered:
            return "never heartbeated: known by its evidence only (online_only)"
        return "no heartbeat within 3 heartbeat intervals"
    if code is ExclusionCode.UNREACHABLE:
        return "this server has no way to ask it"
    if code is ExclusionCode.DOWN:
        return f"down: {c.down}"
    if code is ExclusionCode.COMPLEXITY:
        return (
            f"a {c.level.value} at this task type takes tasks up to"
            f" {c.max_complexity.value}, not {complexity}"
        )
    if code is ExclusionCode.BELOW_MIN_RANK:
        return f"rank {c.rank} below min_agent_rank {min_rank}"
    if code is ExclusionCode.LEVEL:
        return f"level {c.level.value} below min_level {spec.min_level}"
    if code is ExclusionCode.TAGS:
        missing = ", ".join(sorted(set(spec.tags) - c.tags))
        return f"does not declare {missing}"
    if code is ExclusionCode.COST:
        if math.isinf(c.cost):
            return "declared no prices (known by its evidence only), and a cost cap is set"
        return f"costs {c.cost:.4f} per round, above max_cost_per_round {spec.max_cost_per_round}"
    if code is ExclusionCode.BELOW_QUALITY_FLOOR and floor is not None:
        high = c.skill + Z95 * c.sd
        if high < floor.value:
            return (
                f"its whole interval ({c.low:.2f}-{high:.2f}) lies below quality_floor"
                f" {floor.value:g}"
            )
        return (
            f"P(skill >= {floor.value:g}) {floor.p(c):.3f} below confidence"
            f" {floor.confidence:g} (skill {c.skill:.2f}, sd {c.sd:.2f})"
        )
    if spec.strategy is Strategy.CHEAPEST_ABOVE:
        shown = "" if last is None else f" (the last pick costs {last.cost:.4f})"
        if math.isinf(c.cost):
            return f"declared no prices: after every agent that did{shown}"
        return f"costs {c.cost:.4f} per round, more than the picks{shown}"
    shown = "" if last is None else f" (the last pick's is {last.low:.2f})"
    return f"lower bound {c.low:.2f} not among the {spec.count} highest{shown}"


def _pick(
    c: Candidate, reason: Strategy, detail: str, sample: float | None, floor: Floor | None
) -> Pick:
    share = None
    if c.share < 1.0:
        share = c.share
        detail += f"; degraded: skill x {c.share:.2f}, the share of calls it answers"
    return Pick(
        agent_id=c.agent_id, skill=c.skill, sd=c.sd, low=c.low, observations=c.observations,
        estimated_cost_per_round=None if math.isinf(c.cost) else c.cost,
        latency_p90_ms=window_percentile(c.latencies_ms, 90), reason=reason, detail=detail,
        sample=sample, success_share=share, p_floor=None if floor is None else floor.p(c),
    )  # fmt: skip


def _best_detail(c: Candidate) -> str:
    return f"lower bound {c.low:.2f} (skill {c.skill:.2f}, sd {c.sd:.2f}) among the highest"


_FIRST_DRAWS = 64
"""How many of the highest draws ``_draws`` sorts first (the rest only when fewer than
``count`` of them are eligible)."""


def _draws(
    table: RoutingTable, eligible: Eligible, count: int, rng: random.Random
) -> list[tuple[float, Candidate]]:
    """The ``count`` highest Thompson draws of eligible agents: one standard normal per
    agent (numpy, seeded from ``rng``), cut at the table's ``tail_sd``, drawn at once over
    the table's ``Tails``; then the agents in the order of their draws (ties: the
    earlier in the tails' order), checked until ``count`` are eligible: the highest
    ``_FIRST_DRAWS`` first (partitioned, then sorted), all of them when those are not
    enough, which gives the same agents in the same order as sorting every draw. Drawing
    for the ineligible too changes nothing (the draws are independent), and only the
    agents checked are built."""
    tails, tail = table.tails, table.tail_sd
    size = len(tails)
    if not size:
        return []
    normal = np.random.default_rng(rng.getrandbits(64)).standard_normal(size)
    np.clip(normal, -tail, tail, out=normal)
    values = tails.skills + tails.sds * normal
    out: list[tuple[float, Candidate]] = []
    seen: set[int] = set()
    first = max(_FIRST_DRAWS, 4 * count)
    if first < size:  # every draw at least the first-th highest, ties at it included
        top = np.flatnonzero(values >= -np.partition(-values, first - 1)[first - 1])
    else:
        top = np.arange(size)
    for whole in (False, True):  # the whole order sorted only when needed
        order = (
            np.argsort(-values, kind="stable") if whole else top[np.lexsort((top, -values[top]))]
        )
        for index in order.tolist():
            if index in seen:
                continue
            seen.add(index)
            c = tails.at(index)
            if eligible(c):
                out.append((float(values[index]), c))
                if len(out) == count:
                    return out
        if len(seen) == size:
            break
    return out


Chosen = list[tuple[Candidate, Strategy, str]]


MIN_CHANCE = 0.01
"""An unproven agent is explored only when the next ``routing.explore_horizon`` judged
answers prove it with at least this probability: below, exploring it spends tasks below
the floor for a decision that will not change."""


def _cheapest_above(
    walk: _Walk, spec: RouteSpec, floor: Floor, slots: int, rules: RoutingRules
) -> tuple[Chosen, set[int]]:
    """cheapest_above's picks from its walk by cost: the cheapest proven (``floor.clears``);
    up to ``slots`` of them given to cheaper agents not yet proven where the evidence
    would most likely change the decision: the highest saving per round times the
    probability that the next ``rules.explore_horizon`` judged answers prove it
    (``floor.p_proven_after``; at least ``MIN_CHANCE``), among those whose 95% interval
    reaches the floor and whose sd is above ``rules.explore_min_sd`` (settled: more
    tasks would not prove them, exploring them only spends tasks below the floor); the
    explored come first, as they are the cheapest.
    When fewer than ``count`` are proven, the places left go to the agents likeliest to
    clear the floor (the highest ``(skill - floor) / sd``) among those it reaches."""
    proven = walk.picks
    chosen: Chosen = [(c, Strategy.CHEAPEST_ABOVE, _proven(c, floor)) for c in proven]
    unproven = [c for c, why in walk.passed if why is ExclusionCode.BELOW_QUALITY_FLOOR]
    taken: set[int] = set()
    gave_way: set[int] = set()
    if len(proven) < spec.count:  # the walk went through every agent
        # never one whose whole 95% interval lies below the floor: shown not to clear it
        unproven = [c for c in unproven if floor.reachable(c)]
        unproven.sort(key=lambda c: -floor.p(c))
        for c in unproven[: spec.count - len(proven)]:
            taken.add(id(c))
            chosen.append((c, Strategy.CHEAPEST_ABOVE,
                           f"not yet shown to clear {floor.value:g}: P {floor.p(c):.3f}"
                           f" (skill {c.skill:.2f}, sd {c.sd:.2f}), the likeliest to"))  # fmt: skip
    elif slots:
        ceiling, horizon = proven[-1].cost, rules.explore_horizon
        options: list[tuple[float, Candidate, float]] = []
        for c in unproven:  # by cost, all cheaper than (or as cheap as) the last pick
            if c.cost >= ceiling:
                break
            if c.sd <= rules.explore_min_sd or not floor.reachable(c):
                continue
            flip = floor.p_proven_after(c, rules.explore_horizon)
            if flip >= MIN_CHANCE:
                options.append(((ceiling - c.cost) * flip, c, flip))
        options.sort(key=lambda o: (-o[0], o[1].cost, o[1].agent_id))
        picked = sorted(options[:slots], key=lambda o: (o[1].cost, o[1].agent_id))
        if picked:
            explored: Chosen = [
                (c, Strategy.EXPLORE,
                 f"explore: costs {_cost(c)}, {ceiling - c.cost:.4f} less per round;"
                 f" P(skill >= {floor.value:g}) {floor.p(c):.3f}; {horizon} more judged"
                 f" answers prove it with probability {flip:.3f}")
                for _, c, flip in picked
            ]  # fmt: skip
            taken = {id(c) for _, c, _ in picked}
            chosen = explored + chosen[: spec.count - len(explored)]
            dropped = proven[len(proven) - len(explored) :]
            gave_way = {id(c) for c in dropped}
            walk.passed = [(c, ExclusionCode.NOT_CHOSEN) for c in dropped] + walk.passed
    if taken:
        walk.passed = [(c, why) for c, why in walk.passed if id(c) not in taken]
    return chosen, gave_way


def _proven(c: Candidate, floor: Floor) -> str:
    shown = f"costs {_cost(c)} per round; P(skill >= {floor.value:g}) {floor.p(c):.3f}"
    if c.skill - floor.z * c.sd >= floor.value:
        return f"{shown}, at least confidence {floor.confidence:g}"
    return f"{shown}; the reference: the floor is a share of its skill"


def _cost(c: Candidate) -> str:
    return "nothing declared" if math.isinf(c.cost) else f"{c.cost:.4f}"


def _explore(
    walk: _Walk, table: RoutingTable, eligible: Eligible, spec: RouteSpec, slots: int,
    rng: random.Random,
) -> tuple[Chosen, dict[int, float], set[int]]:  # fmt: skip
    """explore's picks: best's (the walk's), of which up to ``slots`` are given to agents
    outside them whose Thompson draw is among the ``count`` highest; the explored come
    first (a caller that tries the picks in order, the gateway, tries them), then best's
    in their order."""
    chosen: Chosen = [(c, Strategy.BEST, _best_detail(c)) for c in walk.picks]
    if not slots or len(walk.picks) < spec.count:
        return chosen, {}, set()
    best = {id(c) for c in walk.picks}
    drawn = _draws(table, eligible, spec.count, rng)
    explored = [(v, c) for v, c in drawn if id(c) not in best][:slots]
    if not explored:
        return chosen, {}, set()
    keep = walk.picks[: spec.count - len(explored)]
    dropped = walk.picks[len(keep) :]
    chosen = [
        (c, Strategy.EXPLORE, f"explore: drew {v:.2f} from skill {c.skill:.2f}, sd {c.sd:.2f}")
        for v, c in explored
    ] + [(c, Strategy.BEST, _best_detail(c)) for c in keep]
    shown = {id(c) for _, c in explored}
    walk.passed = [(c, ExclusionCode.NOT_CHOSEN) for c in dropped] + [
        (c, why) for c, why in walk.passed if id(c) not in shown
    ]
    return chosen, {id(c): v for v, c in explored}, {id(c) for c in dropped}


def _reference(c: Candidate | None) -> Reference | None:
    if c is None:
        return None
    return Reference(
        agent_id=c.agent_id, skill=c.skill, sd=c.sd, low=c.low,
        estimated_cost_per_round=None if math.isinf(c.cost) else c.cost,
    )  # fmt: skip


def route(
    table: RoutingTable,
    spec: RouteSpec,
    *,
    now: float,
    seed: int,
    rules: RoutingRules | None = None,
    complexity: Complexity | None = None,
    min_rank: int = 0,
) -> Routing:
    """Choose ``spec.count`` agents of ``table`` (fewer when fewer qualify: ``enough``
    is then false); see the module docstring."""
    rules = rules or RoutingRules()
    rng = random.Random(seed)
    reference = _first(table.by_low, _checker(spec, complexity, min_rank, None))
    floor = _floor(spec, reference, rules)
    check = _checker(spec, complexity, min_rank, floor)
    listed = rules.max_listed_excluded
    share = rules.max_explore_share if spec.explore_share is None else spec.explore_share
    slots = 0
    if spec.strategy is not Strategy.BEST:
        slots = min(spec.count, int(share * spec.count + rng.random()))
    samples: dict[int, float] = {}
    if spec.strategy is Strategy.CHEAPEST_ABOVE:
        walk = _walk(table.by_cost, lambda c: (c.cost, c.low), check, spec.count, rng, listed)
        if floor is None:  # no agent passes the rules: nothing to choose
            chosen: Chosen = []
            gave_way: set[int] = set()
        else:
            chosen, gave_way = _cheapest_above(walk, spec, floor, slots, rules)
    else:
        walk = _walk(table.by_low, lambda c: c.low, check, spec.count, rng, listed)
        eligible = _eligible(spec, complexity, min_rank)
        chosen, samples, gave_way = _explore(walk, table, eligible, spec, slots, rng)
    last = walk.picks[-1] if walk.picks else None
    if len(chosen) < spec.count:  # too few: every agent left out, with its reason
        listed = len(walk.passed)
    excluded = [
        NotChosen(
            agent_id=c.agent_id, reason=why,
            detail=(
                "gave its place to an explored agent"
                if id(c) in gave_way
                else _detail(why, c, spec, complexity, min_rank, last, floor)
            ),
            p_floor=None if floor is None else floor.p(c),
        )
        for c, why in walk.passed[:listed]
    ]  # fmt: skip
    agents = [_pick(c, reason, detail, samples.get(id(c)), floor) for c, reason, detail in chosen]
    return Routing(
        strategy=spec.strategy, task_type=spec.task_type, count=spec.count, seed=seed,
        explore_slots=slots, agents=agents, excluded=excluded,
        unlisted=len(table) - len(agents) - len(excluded),
        quality_floor=None if floor is None else floor.value,
        quality_floor_share=spec.quality_floor_share,
        confidence=None if floor is None else floor.confidence,
        reference=_reference(reference),
    )  # fmt: skip
