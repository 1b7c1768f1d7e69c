"""Routing's pure selection: each strategy's exact picks, exclusions with reasons, seeds."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from agentladder.domain.levels import Level
from agentladder.domain.routing import (
    Candidate,
    ExclusionCode,
    RouteSpec,
    RoutingRules,
    Strategy,
    route,
    routing_table,
)
from agentladder.domain.routing.select import _checker, _eligible
from agentladder.domain.rules import Complexity, MaxComplexity


def agent(name: str, skill: float, sd: float, cost: float, **more: object) -> Candidate:
    fields: dict[str, object] = {"observations": 20, **more}
    return Candidate(
        agent_id=name, skill=skill, sd=sd, low=max(0.0, skill - 1.96 * sd), cost=cost,
        **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def _member_of(allowed: set[str]) -> Callable[[Candidate], bool]:
    """An eligibility check that admits exactly the agents named in ``allowed``."""
    return lambda c: c.agent_id in allowed


# lower bounds: a 8.0, b 7.02, c 6.04, d 4.08, e 0.1 (new); costs: d < c < e < b < a
FLEET = [
    agent("a", 9.0, 0.5, 0.050),
    agent("b", 8.0, 0.5, 0.030),
    agent("c", 7.0, 0.49, 0.010),
    agent("d", 6.0, 0.98, 0.005),
    agent("e", 5.0, 2.5, 0.020, observations=0),
]


def picks(
    spec: RouteSpec, fleet: list[Candidate] = FLEET, seed: int = 1, **kw: object
) -> list[str]:
    result = route(routing_table(fleet), spec, now=1000.0, seed=seed, **kw)  # type: ignore[arg-type]
    return [p.agent_id for p in result.agents]


def test_best_picks_the_highest_lower_bounds() -> None:
    """best: the two highest lower bounds, best first, each with its reason."""
    result = route(routing_table(FLEET), RouteSpec(count=2), now=0.0, seed=1)
    assert [p.agent_id for p in result.agents] == ["a", "b"]
    assert {p.reason for p in result.agents} == {Strategy.BEST}
    assert result.agents[0].low == pytest.approx(8.02)
    assert [(e.agent_id, e.reason) for e in result.excluded] == [
        ("c", ExclusionCode.NOT_CHOSEN), ("d", ExclusionCode.NOT_CHOSEN),
        ("e", ExclusionCode.NOT_CHOSEN),
    ]  # fmt: skip
    assert result.enough
    assert result.estimated_cost_per_round == pytest.approx(0.08)


def test_cheapest_above_picks_the_cheapest_clearing_the_floor() -> None:
    """cheapest_above 6.0: c and b are the cheapest whose lower bound clears it (d is
    cheaper but 4.08, e cheaper but unproven); a costs more."""
    spec = RouteSpec(count=2, strategy=Strategy.CHEAPEST_ABOVE, quality_floor=6.0)
    result = route(
        routing_table(FLEET), spec, now=0.0, seed=1, rules=RoutingRules(max_explore_share=0)
    )
    assert [p.agent_id for p in result.agents] == ["c", "b"]
    reasons = {e.agent_id: e.reason for e in result.excluded}
    assert reasons == {
        "d": ExclusionCode.BELOW_QUALITY_FLOOR, "e": ExclusionCode.BELOW_QUALITY_FLOOR,
        "a": ExclusionCode.NOT_CHOSEN,
    }  # fmt: skip


def test_cheapest_above_explores_a_cheaper_unproven_agent_within_its_slots() -> None:
    """With a slot (confidence 0.8), the cheaper agent not yet proven where the next 10
    judged answers most likely prove a saving takes the dearest proven pick's place, first (the
    cheapest), marked explore: d (6.0 +- 0.98, saves 0.025 per round, proven after 10
    more with probability 0.117), not e (5.0 +- 2.5: 0.246, but saves only 0.010); b then
    says it gave its place."""
    spec = RouteSpec(count=2, strategy=Strategy.CHEAPEST_ABOVE, quality_floor=6.0, confidence=0.8)
    rules = RoutingRules(max_explore_share=0.5)
    found = [route(routing_table(FLEET), spec, now=0.0, seed=s, rules=rules) for s in range(60)]
    explored = [r for r in found if any(p.reason is Strategy.EXPLORE for p in r.agents)]
    assert explored
    assert all(r.explore_slots == 1 for r in explored)
    assert all(r.explore_slots == 0 for r in found if r not in explored)
    first = explored[0]
    assert [p.agent_id for p in first.agents] == ["d", "c"]
    assert first.agents[0].reason is Strategy.EXPLORE
    assert "10 more judged answers prove it with probability 0.117" in first.agents[0].detail
    assert first.agents[0].p_floor == pytest.approx(0.5)
    gave = [e for e in first.excluded if e.agent_id == "b"]
    assert gave[0].detail == "gave its place to an explored agent"


def test_cheapest_above_does_not_explore_a_settled_agent_just_below_the_floor() -> None:
    """A cheap agent known to be just below the floor (6.4, sd 0.2) draws above it about
    a third of the time, but is settled (sd <= explore_min_sd 0.3): never explored, where
    an equally cheap unsettled one (sd 0.5) is for some seeds."""
    spec = RouteSpec(count=2, strategy=Strategy.CHEAPEST_ABOVE, quality_floor=6.5)
    rules = RoutingRules(max_explore_share=0.5)
    settled = [agent("s", 6.4, 0.2, 0.001), *FLEET[:3]]
    unsettled = [agent("u", 6.4, 0.5, 0.001), *FLEET[:3]]
    seeds = range(60)
    assert not any("s" in picks(spec, settled, seed=x, rules=rules) for x in seeds)
    assert any("u" in picks(spec, unsettled, seed=x, rules=rules) for x in seeds)
    loose = RoutingRules(max_explore_share=0.5, explore_min_sd=0.0)
    assert any("s" in picks(spec, settled, seed=x, rules=loose) for x in seeds)


def test_cheapest_above_fills_with_the_likeliest_when_too_few_are_proven() -> None:
    """Floor 7.5 with confidence 0.975 (the 95% lower bound): only a is proven; the other
    place goes to b, likeliest to clear it ((8.0 - 7.5) / 0.5 = 1), marked not yet
    shown."""
    spec = RouteSpec(count=2, strategy=Strategy.CHEAPEST_ABOVE, quality_floor=7.5, confidence=0.975)
    result = route(routing_table(FLEET), spec, now=0.0, seed=1)
    assert [p.agent_id for p in result.agents] == ["a", "b"]
    assert result.agents[1].detail.startswith("not yet shown to clear 7.5")
    assert result.enough
    assert "b" not in {e.agent_id for e in result.excluded}


def test_cheapest_above_never_picks_an_agent_whose_interval_lies_below_the_floor() -> None:
    """Floor 9.95, that nobody is shown to clear: only a (9.0 +- 0.98, up to 9.98) may
    still reach it; b, c, d and e (up to 8.98, 7.96, 7.92, 9.90) are shown not to and are
    never picked as "likeliest": too few, and every one is listed, its interval named."""
    spec = RouteSpec(count=2, strategy=Strategy.CHEAPEST_ABOVE, quality_floor=9.95)
    result = route(
        routing_table(FLEET), spec, now=0.0, seed=1, rules=RoutingRules(max_listed_excluded=1)
    )
    assert not result.enough
    assert [p.agent_id for p in result.agents] == ["a"]
    assert result.agents[0].detail.startswith("not yet shown to clear 9.95")
    reasons = {e.agent_id: e.reason for e in result.excluded}
    assert reasons == dict.fromkeys("bcde", ExclusionCode.BELOW_QUALITY_FLOOR)
    assert result.unlisted == 0  # too few: every agent left out is listed, past the cap
    details = {e.agent_id: e.detail for e in result.excluded}
    assert details["b"] == "its whole interval (7.02-8.98) lies below quality_floor 9.95"


def test_too_few_lists_every_agent_left_out_whatever_the_cap() -> None:
    """Four asked for among five with one offline: not enough, and all the agents left
    out are listed although max_listed_excluded is 0."""
    fleet = [*FLEET[:4], replace(FLEET[4], online=False)]
    result = route(
        routing_table(fleet), RouteSpec(count=5), now=0.0, seed=1,
        rules=RoutingRules(max_listed_excluded=0),
    )  # fmt: skip
    assert not result.enough
    assert [(e.agent_id, e.reason) for e in result.excluded] == [("e", ExclusionCode.OFFLINE)]
    assert result.unlisted == 0


def test_an_agent_with_no_declared_prices_is_left_out_by_a_cost_cap() -> None:
    """An agent known by its evidence alone has no declared prices (cost inf): a cost cap
    leaves it out saying so; without one it may be picked, its cost shown as none."""
    fleet = [agent("imported", 9.0, 0.1, math.inf), *FLEET[:2]]
    capped = route(
        routing_table(fleet), RouteSpec(count=2, max_cost_per_round=1.0), now=0.0, seed=1
    )
    left = {e.agent_id: e for e in capped.excluded}
    assert left["imported"].reason is ExclusionCode.COST
    assert "declared no prices" in left["imported"].detail
    free = route(routing_table(fleet), RouteSpec(count=2), now=0.0, seed=1)
    assert free.agents[0].agent_id == "imported"
    assert free.agents[0].estimated_cost_per_round is None
    assert free.estimated_cost_per_round == pytest.approx(0.05)


def test_explore_without_slots_is_best_and_with_slots_tries_the_uncertain_agent() -> None:
    """explore with max_explore_share 0 picks as best; with 1, an agent whose draw beats
    best's picks takes a slot for some seeds (e, wide interval), with its draw shown."""
    none = RoutingRules(max_explore_share=0.0)
    spec = RouteSpec(count=2, strategy=Strategy.EXPLORE)
    assert all(picks(spec, seed=s, rules=none) == ["a", "b"] for s in range(50))
    every = RoutingRules(max_explore_share=1.0)
    chosen = [route(routing_table(FLEET), spec, now=0.0, seed=s, rules=every) for s in range(200)]
    explored = [p for r in chosen for p in r.agents if p.reason is Strategy.EXPLORE]
    assert {p.agent_id for p in explored} >= {"e"}
    assert all(p.sample is not None and p.detail.startswith("explore") for p in explored)
    for r in chosen:  # the places not explored go to best's picks, in best's order
        kept = [p.agent_id for p in r.agents if p.reason is Strategy.BEST]
        assert kept == ["a", "b"][: len(kept)]


def test_explore_share_is_bounded_by_the_slots() -> None:
    """Over many seeds, the share of explore picks stays within max_explore_share (the
    slots are floor(share * count + u)); no routing explores more than its slots."""
    rules = RoutingRules(max_explore_share=0.25)
    fleet = [*FLEET, *(agent(f"new{i}", 5.0, 2.5, 0.02, observations=0) for i in range(8))]
    spec = RouteSpec(count=4, strategy=Strategy.EXPLORE)
    total = explored = 0
    for seed in range(400):
        result = route(routing_table(fleet), spec, now=0.0, seed=seed, rules=rules)
        used = sum(p.reason is Strategy.EXPLORE for p in result.agents)
        assert used <= result.explore_slots <= 1
        total += len(result.agents)
        explored += used
    assert 0 < explored / total <= 0.25


def test_the_same_seed_gives_the_same_choice() -> None:
    """Repeating a routing with its seed repeats it; other seeds differ somewhere."""
    spec = RouteSpec(count=2, strategy=Strategy.EXPLORE)
    rules = RoutingRules(max_explore_share=1.0)
    table = routing_table(FLEET)
    first = [route(table, spec, now=0.0, seed=s, rules=rules) for s in range(30)]
    again = [route(table, spec, now=0.0, seed=s, rules=rules) for s in range(30)]
    assert first == again
    assert len({tuple(p.agent_id for p in r.agents) for r in first}) > 1


def test_ties_at_the_last_place_are_drawn_with_the_seed() -> None:
    """Four agents with the same lower bound for two places: the seed decides, the same
    seed the same way, and over seeds every agent gets a place."""
    fleet = [agent(name, 7.0, 0.5, 0.01) for name in "wxyz"]
    spec = RouteSpec(count=2)
    assert picks(spec, fleet, seed=7) == picks(spec, fleet, seed=7)
    seen = {name for s in range(40) for name in picks(spec, fleet, seed=s)}
    assert seen == set("wxyz")
    result = route(routing_table(fleet), spec, now=0.0, seed=7)
    assert len(result.excluded) == 2


def test_every_rule_excludes_with_its_reason() -> None:
    """offline, down, complexity, level, tags and cost each exclude an agent and say
    so; the two left are chosen."""
    fleet = [
        agent("off", 9.9, 0.1, 0.01, online=False),
        agent("cool", 9.8, 0.1, 0.01, down="3 failed calls in a row"),
        agent("rookie", 9.7, 0.1, 0.01, max_complexity=MaxComplexity.SIMPLE),
        agent("low_level", 9.6, 0.1, 0.01, max_complexity=MaxComplexity.ANY, level=Level.ROOKIE),
        agent("untagged", 9.5, 0.1, 0.01, level=Level.TRUSTED),
        agent("dear", 9.4, 0.1, 5.0, level=Level.TRUSTED, tags=frozenset({"audit"})),
        agent("ok1", 8.0, 0.1, 0.01, level=Level.TRUSTED, tags=frozenset({"audit"})),
        agent("ok2", 7.0, 0.1, 0.01, level=Level.EXPERT, tags=frozenset({"audit", "x"})),
    ]
    spec = RouteSpec(count=2, tags=("audit",), min_level=Level.TRUSTED, max_cost_per_round=1.0)
    result = route(routing_table(fleet), spec, now=1000.0, seed=1, complexity=Complexity.COMPLEX)
    assert [p.agent_id for p in result.agents] == ["ok1", "ok2"]
    reasons = {e.agent_id: e.reason for e in result.excluded}
    assert reasons == {
        "off": ExclusionCode.OFFLINE, "cool": ExclusionCode.DOWN,
        "rookie": ExclusionCode.COMPLEXITY, "low_level": ExclusionCode.LEVEL,
        "untagged": ExclusionCode.TAGS, "dear": ExclusionCode.COST,
    }  # fmt: skip
    details = {e.agent_id: e.detail for e in result.excluded}
    assert "audit" in details["untagged"]
    assert "complex" in details["rookie"]
    assert details["cool"] == "down: 3 failed calls in a row"


def test_a_degraded_agent_ranks_by_its_expected_quality() -> None:
    """A degraded agent comes scaled by the share of calls it answers: at 9.0 x 0.5 it
    ranks below a healthy 8.0, and its pick says so with the share."""
    fleet = [
        agent("flaky", 4.5, 0.05, 0.01, share=0.5), agent("steady", 8.0, 0.1, 0.01),
        agent("third", 6.0, 0.1, 0.01),
    ]  # fmt: skip
    result = route(routing_table(fleet), RouteSpec(count=3), now=0.0, seed=1)
    assert [p.agent_id for p in result.agents] == ["steady", "third", "flaky"]
    flaky = result.agents[2]
    assert flaky.success_share == 0.5
    assert "degraded" in flaky.detail
    assert result.agents[0].success_share is None


def test_too_few_qualifying_agents_are_reported_with_the_excluded() -> None:
    """Three asked for, two qualify: not enough, the offline one named."""
    fleet = [*FLEET[:2], replace(FLEET[2], online=False)]
    result = route(routing_table(fleet), RouteSpec(count=3), now=0.0, seed=1)
    assert not result.enough
    assert [p.agent_id for p in result.agents] == ["a", "b"]
    assert [(e.agent_id, e.reason) for e in result.excluded] == [("c", ExclusionCode.OFFLINE)]


def test_the_listing_is_capped_and_counts_the_rest() -> None:
    """With max_listed_excluded 1, one agents left out are listed and the rest counted."""
    result = route(
        routing_table(FLEET), RouteSpec(count=2), now=0.0, seed=1,
        rules=RoutingRules(max_listed_excluded=1),
    )  # fmt: skip
    assert len(result.excluded) == 1
    assert result.unlisted == 2


def test_cheapest_above_needs_a_floor() -> None:
    """strategy cheapest_above without quality_floor is refused, naming it."""
    with pytest.raises(ValueError, match="quality_floor"):
        RouteSpec(count=2, strategy=Strategy.CHEAPEST_ABOVE)


def test_the_frontier_is_every_agent_no_cheaper_one_beats() -> None:
    """By cost: an agent is on the frontier when its lower bound beats every agent that
    costs no more; of two at one price only the better."""
    from agentladder.domain.routing.frontier import frontier

    points = [("dear_weak", 3.0, 0.9), ("cheap", 4.0, 0.1), ("mid", 6.0, 0.5),
              ("mid_twin", 5.0, 0.5), ("dear_best", 8.0, 1.0), ("free_bad", 1.0, 0.0)]  # fmt: skip
    assert frontier(points) == ["free_bad", "cheap", "mid", "dear_best"]


def test_the_draws_eligibility_agrees_with_the_rules_on_every_agent() -> None:
    """The Thompson draws test eligibility with the rules in another order (the likeliest
    to fail first); on 300 random agents under 200 random requests it agrees with the
    rules' check everywhere (an agent is eligible exactly when no rule excludes it)."""
    rng = random.Random(7)
    levels, tags = list(Level), ["code", "sql", "docs"]
    fleet = [
        agent(
            f"x{i}",
            rng.uniform(0, 10),
            rng.uniform(0.1, 3),
            rng.uniform(0.001, 0.1),
            online=rng.random() > 0.2,
            reachable=rng.random() > 0.1,
            down=rng.choice([None, None, "down"]),
            rank=rng.randrange(4),
            level=rng.choice(levels),
            max_complexity=rng.choice(list(MaxComplexity)),
            tags=frozenset(t for t in tags if rng.random() < 0.5),
        )
        for i in range(300)
    ]
    agreed = eligible_count = 0
    for _ in range(200):
        strategy = rng.choice(list(Strategy))
        spec = RouteSpec(
            count=2, strategy=strategy,
            tags=tuple(t for t in tags if rng.random() < 0.3),
            max_cost_per_round=rng.choice([None, 0.02, 0.05]),
            min_level=rng.choice([None, *levels]),
            quality_floor=rng.uniform(2, 8) if strategy is Strategy.CHEAPEST_ABOVE else None,
        )  # fmt: skip
        complexity = rng.choice([None, *Complexity])
        min_rank = rng.randrange(3)
        check = _checker(spec, complexity, min_rank, None)
        eligible = _eligible(spec, complexity, min_rank)
        for c in fleet:
            assert eligible(c) == (check(c) is None), (spec, complexity, min_rank, c)
            agreed += 1
            eligible_count += eligible(c)
    assert agreed == 60_000
    assert 0 < eligible_count < agreed  # both outcomes occur


def test_explores_draws_follow_the_posteriors_and_skip_the_ineligible() -> None:
    """explore's Thompson draws (numpy, all at once) are samples of each agent's skill
    posterior: with best's picks a and b, count 2 and one slot, the slot goes to the
    agent whose draw beats both of a's and b's draws, as often as the posteriors say
    (c: 9.0 +- 1.0, d: 8.0 +- 2.0; estimated by the same sum in plain Python over 20,000
    draws, fixed seed); an agent that fails the rules (d with a tag asked for that it
    lacks) is never drawn in, whatever it draws."""
    fleet = [
        agent("a", 9.5, 0.05, 0.05, tags=frozenset({"x"})),
        agent("b", 9.4, 0.05, 0.05, tags=frozenset({"x"})),
        agent("c", 9.0, 1.0, 0.05, tags=frozenset({"x"})),
        agent("d", 8.0, 2.0, 0.05),
    ]
    every = RoutingRules(max_explore_share=0.5)  # count 2: one slot
    spec = RouteSpec(count=2, strategy=Strategy.EXPLORE)
    runs = 3000
    found = {"c": 0, "d": 0}
    for seed in range(runs):
        result = route(routing_table(fleet), spec, now=0.0, seed=seed, rules=every)
        for p in result.agents:
            if p.reason is Strategy.EXPLORE:
                found[p.agent_id] += 1
                assert p.sample is not None
    rng = random.Random(7)
    expected = {"c": 0, "d": 0}
    draws = 20_000
    for _ in range(draws):  # the agent among c and d explored: top two draws of all four
        values = {name: s + sd * max(-4.0, min(4.0, rng.gauss(0.0, 1.0)))
                  for name, s, sd in (("a", 9.5, 0.05), ("b", 9.4, 0.05), ("c", 9.0, 1.0),
                                      ("d", 8.0, 2.0))}  # fmt: skip
        top = sorted(values, key=lambda name: -values[name])[:2]
        explored = [name for name in top if name in ("c", "d")]
        if explored:
            expected[explored[0]] += 1
    for name in ("c", "d"):
        share, want = found[name] / runs, expected[name] / draws
        assert want > 0.05
        assert abs(share - want) < 4 * math.sqrt(want * (1 - want) / runs) + 0.005, (name, share)
    tagged = spec.model_copy(update={"tags": ("x",)})
    for seed in range(300):
        result = route(routing_table(fleet), tagged, now=0.0, seed=seed, rules=every)
        assert "d" not in {p.agent_id for p in result.agents}


def test_explores_draws_are_those_of_sorting_every_draw() -> None:
    """``_draws`` sorts only the highest draws first: on tables of 1 to 300 agents with
    ties (equal skills, sd 0), few or many eligible and counts of 1 to 80, it gives the
    agents and draws that walking every draw in sorted order (ties: the earlier in the
    tails' order) gives, from the same seed."""
    import numpy as np

    from agentladder.domain.routing.select import _draws

    for trial in range(120):
        r = random.Random(trial)
        size = r.choice([1, 5, 63, 64, 65, 300])
        tied = trial % 3 == 0  # a block of equal draws across the first sort's edge
        fleet = [
            agent(f"x{i:03d}", 5.0, 0.0, 0.01)
            if tied and i >= size // 4
            else agent(f"x{i:03d}", r.choice([5.0, r.uniform(0, 10)]), r.choice([0.0, 0.5, 2.0]),
                       0.01)
            for i in range(size)
        ]  # fmt: skip
        share = r.choice([0.02, 0.3, 1.0])
        allowed = {c.agent_id for c in fleet if r.random() < share}
        count = r.choice([1, 3, 80])
        table = routing_table(fleet)
        got = _draws(table, _member_of(allowed), count, random.Random(trial))
        seeded = random.Random(trial)
        normal = np.random.default_rng(seeded.getrandbits(64)).standard_normal(size)
        values = table.tails.skills + table.tails.sds * np.clip(normal, -4.0, 4.0)
        want = [
            (float(values[i]), table.tails.at(i))
            for i in np.argsort(-values, kind="stable").tolist()
            if table.tails.at(i).agent_id in allowed
        ][:count]
        assert got == want, trial
