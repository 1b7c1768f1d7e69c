"""cheapest_above by the numbers (docs/routing.md, "The decision rule"): one task to one
agent, floors as a score or a share of the best available agent's skill, the posterior
probability of clearing the floor against ``confidence``, and the explore share."""

from __future__ import annotations

import math

import pytest

from agentladder.domain.routing import (
    Candidate,
    ExclusionCode,
    RouteSpec,
    RoutingRules,
    Strategy,
    route,
    routing_table,
)
from agentladder.domain.routing.floor import Floor, p_clear
from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.rules import SkillRules
from tests.domain.skill_helpers import fold
from tests.domain.test_skill_scale import NOW, SIX, _six

RULES = SkillRules()
PRICE = {"a9": 0.090, "a85": 0.050, "a7": 0.020, "a6": 0.010, "a5": 0.004, "a4": 0.002}
"""The six peers' costs per round: the better, the dearer."""


def agent(name: str, skill: float, sd: float, cost: float, observations: int = 20) -> Candidate:
    return Candidate(
        agent_id=name, skill=skill, sd=sd, low=skill - 1.96 * sd, observations=observations,
        cost=cost,
    )  # fmt: skip


def six_fleet(seed: int, fitted: bool) -> list[Candidate]:
    """The six honest peers of quality 9 to 4 (30 deliberations, noise 0.3) as routing
    sees them, fitted or between fits, priced by quality."""
    events = _six(seed)
    states, fleet = fold(events) if fitted else fold(events, RULES, {}, None)
    out = []
    for name in SIX:
        view = skill_view(states[name], fleet, "qa", NOW, RULES)
        out.append(Candidate(
            agent_id=name, skill=view.skill, sd=view.sd, low=view.low,
            observations=view.observations, cost=PRICE[name],
        ))  # fmt: skip
    return out


def chosen(fleet: list[Candidate], **spec: object) -> list[str]:
    fields: dict[str, object] = {"strategy": Strategy.CHEAPEST_ABOVE, "explore_share": 0.0}
    result = route(
        routing_table(fleet), RouteSpec.model_validate({**fields, **spec}), now=NOW, seed=1
    )
    return [p.agent_id for p in result.agents]


@pytest.mark.parametrize("fitted", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_six_peers_cheapest_above_6_5_picks_the_agent_of_7(seed: int, fitted: bool) -> None:
    """Floor 6.5 among the six peers: the agent of quality 7 (the cheapest shown to clear
    it), after the fit and between fits; the 8.5 and 9 agents only when more are asked
    for than it; never the 6 (below the floor), nor the cheaper 5 and 4. After the fit
    even its 95% lower bound clears 6.5 (confidence 0.975); between fits (sd 0.26) that
    takes a fit."""
    fleet = six_fleet(seed, fitted)
    assert chosen(fleet, count=1, quality_floor=6.5) == ["a7"]
    assert chosen(fleet, count=2, quality_floor=6.5) == ["a7", "a85"]
    assert chosen(fleet, count=3, quality_floor=6.5) == ["a7", "a85", "a9"]
    if fitted:
        assert chosen(fleet, count=1, quality_floor=6.5, confidence=0.975) == ["a7"]


# the reference a (highest lower bound); b and c cheaper, less sure
TRIO = [agent("a", 9.0, 0.3, 0.10), agent("b", 8.7, 0.3, 0.03), agent("c", 8.3, 0.6, 0.01)]


def test_a_relative_floor_is_a_share_of_the_best_available_agents_skill() -> None:
    """quality_floor_share 0.95 of a's 9.0 is 8.55; the answer names it, the reference
    and every agent's probability of clearing it."""
    spec = RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=0.95,
                     confidence=0.6, explore_share=0.0)  # fmt: skip
    result = route(routing_table(TRIO), spec, now=NOW, seed=1)
    assert result.quality_floor == pytest.approx(8.55)
    assert result.quality_floor_share == 0.95
    assert result.confidence == 0.6
    assert result.reference is not None
    assert (result.reference.agent_id, result.reference.skill) == ("a", 9.0)
    [pick] = result.agents
    assert pick.agent_id == "b"
    assert pick.p_floor == pytest.approx(p_clear(8.7, 0.3, 8.55))  # 0.691
    assert "P(skill >= 8.55) 0.691, at least confidence 0.6" in pick.detail
    left = {e.agent_id: e for e in result.excluded}
    assert left["c"].reason is ExclusionCode.BELOW_QUALITY_FLOOR
    assert left["c"].p_floor == pytest.approx(p_clear(8.3, 0.6, 8.55))  # 0.338
    assert left["c"].detail == "P(skill >= 8.55) 0.338 below confidence 0.6 (skill 8.30, sd 0.60)"
    assert left["a"].reason is ExclusionCode.NOT_CHOSEN
    assert left["a"].p_floor == pytest.approx(p_clear(9.0, 0.3, 8.55))


@pytest.mark.parametrize(
    ("share", "confidence", "pick"),
    [
        (0.95, 0.6, "b"),  # floor 8.55: b 0.69, c 0.34
        (0.95, 0.8, "a"),  # b 0.69 short of 0.8; a 0.93
        (0.90, 0.6, "c"),  # floor 8.1: c 0.63
        (0.90, 0.8, "b"),  # c 0.63 short; b 0.98
        (0.90, 0.99, "a"),  # b 0.977 short; a 0.9987
        (1.00, 0.6, "a"),  # floor 9.0: nobody is proven; a is the likeliest (0.5)
    ],
)
def test_the_floor_share_and_confidence_change_the_pick_as_documented(
    share: float, confidence: float, pick: str
) -> None:
    assert chosen(TRIO, count=1, quality_floor_share=share, confidence=confidence) == [pick]


def test_confidence_0975_is_the_lower_bound_rule() -> None:
    """confidence 0.975 proves exactly the agents whose 95% lower bound clears the floor
    (the rule before probabilities), here over a grid of skills and sds."""
    floor = Floor(7.0, 0.975)
    for i in range(60):
        for sd in (0.05, 0.2, 0.5, 1.3):
            c = agent("x", 5.0 + i * 0.07, sd, 0.01)
            if abs(c.skill - 1.959963984540054 * sd - 7.0) > 1e-9:
                assert floor.clears(c) == (c.skill - 1.959963984540054 * sd >= 7.0)


def test_the_default_confidence_is_the_routing_rules() -> None:
    """Without confidence the request takes routing.confidence; the answer says which."""
    spec = RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=0.95,
                     explore_share=0.0)  # fmt: skip
    for value, pick in ((0.6, "b"), (0.8, "a")):
        result = route(routing_table(TRIO), spec, now=NOW, seed=1,
                       rules=RoutingRules(confidence=value))  # fmt: skip
        assert result.confidence == value
        assert [p.agent_id for p in result.agents] == [pick]


def test_a_floor_and_a_share_together_are_refused() -> None:
    with pytest.raises(ValueError, match="give one of quality_floor and quality_floor_share"):
        RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE, quality_floor=7.0,
                  quality_floor_share=0.9)  # fmt: skip
    with pytest.raises(ValueError, match="needs a quality_floor or a quality_floor_share"):
        RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE)


# c is cheaper than the proven b but not yet proven; d is cheaper still, settled below
EXPLORED = [
    agent("a", 9.0, 0.2, 0.10),
    agent("b", 8.8, 0.2, 0.05),
    agent("c", 8.4, 0.5, 0.01, observations=4),
    agent("d", 7.0, 0.1, 0.001, observations=400),
]


def test_the_explore_share_routes_that_share_of_requests_reproducibly() -> None:
    """explore_share 0.25, count 1, 4,000 seeds: the unproven cheaper c (P 0.58 of clearing
    8.55, short of 0.8) takes the request in a share of them within binomial error of
    0.25 (4 sd), b the rest; d (settled, its interval below the floor) never; the same
    seed gives the same pick; explore_share 0 never explores."""
    table = routing_table(EXPLORED)
    spec = RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=0.95,
                     explore_share=0.25)  # fmt: skip
    picks = [route(table, spec, now=NOW, seed=s).agents[0] for s in range(4000)]
    explored = [p for p in picks if p.reason is Strategy.EXPLORE]
    assert {p.agent_id for p in explored} == {"c"}
    assert {p.agent_id for p in picks if p.reason is not Strategy.EXPLORE} == {"b"}
    share = len(explored) / len(picks)
    assert abs(share - 0.25) <= 4 * math.sqrt(0.25 * 0.75 / 4000), share
    again = [route(table, spec, now=NOW, seed=s).agents[0] for s in range(200)]
    assert again == picks[:200]
    quiet = spec.model_copy(update={"explore_share": 0.0})
    assert {route(table, quiet, now=NOW, seed=s).agents[0].agent_id for s in range(300)} == {"b"}


def test_exploration_goes_where_more_answers_most_likely_prove_a_saving() -> None:
    """Cheaper unproven agents: e (3 answers, just short of the floor) is where the next 10
    judged answers most likely prove it, and is explored; f (as short, after 200 answers:
    10 more hardly move it, chance under 1%) never is, though cheaper; g, whose chance is
    smaller than e's, is explored after e when two picks may explore."""
    fleet = [
        agent("a", 9.0, 0.2, 0.10),
        agent("b", 8.8, 0.2, 0.05),
        agent("e", 8.6, 0.4, 0.02, observations=3),
        agent("f", 8.6, 0.35, 0.005, observations=200),
        agent("g", 8.2, 0.4, 0.01, observations=3),
    ]
    floor = Floor(8.55, 0.8)
    e, f, g = fleet[2], fleet[3], fleet[4]
    assert floor.p_proven_after(f, 10) < 0.01 < floor.p_proven_after(g, 10)
    assert floor.p_proven_after(e, 10) * 0.03 > floor.p_proven_after(g, 10) * 0.04
    spec = RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=0.95,
                     confidence=0.8, explore_share=1.0)  # fmt: skip
    result = route(routing_table(fleet), spec, now=NOW, seed=3)
    assert [(p.agent_id, p.reason) for p in result.agents] == [("e", Strategy.EXPLORE)]
    assert "10 more judged answers prove it with probability" in result.agents[0].detail
    gave = {x.agent_id: x.detail for x in result.excluded}
    assert gave["b"] == "gave its place to an explored agent"
    two = spec.model_copy(update={"count": 2})
    result = route(routing_table(fleet), two, now=NOW, seed=3)
    assert [p.agent_id for p in result.agents] == ["g", "e"]  # by cost
    assert {p.reason for p in result.agents} == {Strategy.EXPLORE}


def test_the_worked_example_explores_c() -> None:
    """docs/routing.md's example at the default confidence 0.65: floor 8.55, b is the pick
    (P 0.691); with one explore slot, c (P 0.338), whose next 10 answers prove it with
    probability 0.103."""
    spec = RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=0.95,
                     explore_share=0.0)  # fmt: skip
    assert RoutingRules().confidence == 0.65
    [pick] = route(routing_table(TRIO), spec, now=NOW, seed=1).agents
    assert (pick.agent_id, pick.reason) == ("b", Strategy.CHEAPEST_ABOVE)
    assert chosen(TRIO, count=1, quality_floor_share=0.9) == ["b"]
    explore = spec.model_copy(update={"explore_share": 1.0})
    [pick] = route(routing_table(TRIO), explore, now=NOW, seed=1).agents
    assert (pick.agent_id, pick.reason) == ("c", Strategy.EXPLORE)
    assert "10 more judged answers prove it with probability 0.103" in pick.detail
    assert Floor(8.55, 0.65).p_proven_after(TRIO[2], 10) == pytest.approx(0.103, abs=5e-4)


def test_a_share_never_pays_more_than_the_reference() -> None:
    """At 100% of the best, nobody is shown to clear the reference's own skill; the pick is
    the reference (a), not b, likelier to clear it (0.62 against 0.5) at ten times the
    cost. With an absolute floor at the same 9.0, the likeliest (b) is picked, marked."""
    fleet = [agent("a", 9.0, 0.1, 0.05), agent("b", 9.3, 1.0, 0.5)]
    assert chosen(fleet, count=1, quality_floor_share=1.0) == ["a"]
    spec = RouteSpec(count=1, strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=1.0,
                     explore_share=0.0)  # fmt: skip
    [pick] = route(routing_table(fleet), spec, now=NOW, seed=1).agents
    assert pick.detail.endswith("the reference: the floor is a share of its skill")
    [pick] = route(
        routing_table(fleet), spec.model_copy(update={"quality_floor_share": None,
                                                      "quality_floor": 9.0}),
        now=NOW, seed=1,
    ).agents  # fmt: skip
    assert pick.agent_id == "b"
    assert pick.detail.startswith("not yet shown to clear 9")
