"""What a gateway request's ``model`` and headers ask for (``services/gateway/choice.py``)."""

from __future__ import annotations

import pytest

from agentladder.domain.routing.spec import Strategy
from agentladder.errors import InvalidInput, UnknownModel
from agentladder.services.gateway.choice import (
    CONFIDENCE_HEADER,
    FLOOR_HEADER,
    FLOOR_SHARE_HEADER,
    MAX_COST_HEADER,
    TAGS_HEADER,
    TASK_TYPE_HEADER,
    Choice,
    choose,
)
from agentladder.services.gateway.settings import GatewayModel

AGENTS = {"alpha", "beta"}
ALIASES = {
    "smart": GatewayModel(task_type="audit"),
    "cheap": GatewayModel(
        task_type="audit", strategy=Strategy.CHEAPEST_ABOVE, quality_floor=7.0,
        tags=("sql",), max_cost_per_round=0.05,
    ),
    "near": GatewayModel(
        task_type="audit", strategy=Strategy.CHEAPEST_ABOVE, quality_floor_share=0.9,
        confidence=0.85, explore_share=0.0,
    ),
}  # fmt: skip


def pick(model: object, **headers: str) -> Choice:
    """``choose`` with the test's agents and aliases, three attempts."""
    named = {key.replace("_", "-"): value for key, value in headers.items()}
    return choose(model, named, agents=AGENTS, aliases=ALIASES, attempts=3)


def test_an_agent_id_is_that_agent_alone() -> None:
    """``model: alpha`` asks alpha, with the task type header kept for the record."""
    found = pick("alpha", x_agentladder_task_type="audit")
    assert found.agent_id == "alpha"
    assert found.spec is None
    assert found.task_type == "audit"


def test_route_forms_name_the_task_type_and_strategy() -> None:
    """``route:audit`` is best at audit; ``route:audit:explore`` explores; as many agents
    as the attempts are routed, one with ``max_attempts: 1`` (no fallback)."""
    best = pick("route:audit")
    assert best.spec is not None
    assert (best.spec.task_type, best.spec.strategy, best.spec.count) == ("audit", "best", 3)
    explore = pick("route:audit:explore")
    assert explore.spec is not None
    assert explore.spec.strategy is Strategy.EXPLORE
    single = choose("route:x", {}, agents=AGENTS, aliases={}, attempts=1)
    assert single.spec is not None
    assert single.spec.count == 1


def test_an_alias_is_its_configured_routing_and_headers_add_to_it() -> None:
    """``cheap`` with a tag, a stricter floor and a higher cap: the tags are joined, the
    higher floor and the lower cap hold."""
    headers = {TAGS_HEADER: "pci, sql", FLOOR_HEADER: "8", MAX_COST_HEADER: "0.5"}
    found = choose("cheap", headers, agents=AGENTS, aliases=ALIASES, attempts=3)
    assert found.spec is not None
    assert found.spec.tags == ("sql", "pci")
    assert found.spec.quality_floor == 8.0
    assert found.spec.max_cost_per_round == 0.05


def test_a_floor_header_makes_an_unnamed_strategy_cheapest_above() -> None:
    """``route:audit`` with a floor is cheapest_above at it; ``route:audit:best`` with a
    floor is refused naming the header (only cheapest_above has a floor)."""
    found = pick("route:audit", x_agentladder_quality_floor="7.5")
    assert found.spec is not None
    assert found.spec.strategy is Strategy.CHEAPEST_ABOVE
    assert found.spec.quality_floor == 7.5
    with pytest.raises(InvalidInput) as refused:
        pick("route:audit:best", x_agentladder_quality_floor="7.5")
    assert refused.value.field == FLOOR_HEADER


def test_the_task_type_header_fills_in_and_may_not_contradict() -> None:
    """A route's task type wins over none; a different one in the header is refused."""
    assert pick("route:audit", x_agentladder_task_type="audit").task_type == "audit"
    with pytest.raises(InvalidInput) as refused:
        pick("smart", x_agentladder_task_type="sql")
    assert refused.value.field == TASK_TYPE_HEADER
    with pytest.raises(InvalidInput) as bad:
        pick("alpha", x_agentladder_task_type="Not A Type")
    assert bad.value.field == TASK_TYPE_HEADER


@pytest.mark.parametrize(
    ("header", "value"),
    [(FLOOR_HEADER, "high"), (FLOOR_HEADER, "11"), (MAX_COST_HEADER, "-1"),
     (MAX_COST_HEADER, "nan")],
)  # fmt: skip
def test_a_header_that_is_not_a_fit_number_is_refused_by_name(header: str, value: str) -> None:
    """Floors and caps must be finite numbers (a floor 0 to 10); the error names the header."""
    with pytest.raises(InvalidInput) as refused:
        choose("route:audit", {header: value}, agents=AGENTS, aliases=ALIASES, attempts=3)
    assert refused.value.field == header
    assert refused.value.value == value


@pytest.mark.parametrize(
    "model", ["gpt-4o", "route:", "route:audit:fastest", "route:a:b:c", "route:Not A Type"]
)
def test_an_unknown_model_is_refused_naming_model(model: str) -> None:
    """No agent, alias or route form: ``UnknownModel`` on field ``model`` with the value."""
    with pytest.raises(UnknownModel) as refused:
        pick(model)
    assert refused.value.field == "model"
    assert refused.value.value == model


def test_a_model_that_is_not_a_string_is_refused() -> None:
    """``model`` missing or not a string is invalid input naming ``model``."""
    for model in (None, 42, ""):
        with pytest.raises(InvalidInput) as refused:
            pick(model)
        assert refused.value.field == "model"


@pytest.mark.parametrize(
    ("model", "task_type", "floor", "share", "confidence"),
    [
        ("route:writing:cheapest_above@0.95", "writing", None, 0.95, None),
        ("route:writing:cheapest_above@95%", "writing", None, 0.95, None),
        ("route:writing:cheapest_above@1", "writing", None, 1.0, None),
        ("route:writing:cheapest_above@7.5", "writing", 7.5, None, None),
        ("route:writing:cheapest_above@10", "writing", 10.0, None, None),
        ("route:writing:cheapest_above@.9:0.8", "writing", None, 0.9, 0.8),
        ("route::cheapest_above@8:0.95", None, 8.0, None, 0.95),
    ],
)  # fmt: skip
def test_a_floor_in_the_model_is_a_share_up_to_1_and_a_skill_above(
    model: str, task_type: str | None, floor: float | None, share: float | None,
    confidence: float | None,
) -> None:  # fmt: skip
    """``@<floor>``: up to 1 (or a percentage) a share of the reference's skill, above 1
    a skill; ``:<confidence>`` after it; the task type may be left empty."""
    found = pick(model)
    assert found.spec is not None
    assert found.spec.strategy is Strategy.CHEAPEST_ABOVE
    assert found.spec.task_type == task_type
    assert found.spec.quality_floor == floor
    assert found.spec.quality_floor_share == share
    assert found.spec.confidence == confidence


def test_route_alone_and_route_with_an_empty_task_type_name_none() -> None:
    """``route`` is best with no task type, ``route::explore`` explore with none (the
    classifier's to type); an alias or agent called ``route`` keeps its name."""
    bare = pick("route")
    assert bare.spec is not None
    assert (bare.spec.task_type, bare.spec.strategy) == (None, Strategy.BEST)
    assert bare.untyped
    explore = pick("route::explore")
    assert explore.spec is not None
    assert (explore.spec.task_type, explore.spec.strategy) == (None, Strategy.EXPLORE)
    aliased = choose("route", {}, agents=AGENTS, aliases={"route": ALIASES["smart"]}, attempts=2)
    assert aliased.task_type == "audit"
    assert choose("route", {}, agents={"route"}, aliases={}, attempts=2).agent_id == "route"


@pytest.mark.parametrize(
    ("model", "said"),
    [
        ("route:writing:best@0.9", "a floor applies to cheapest_above only"),
        ("route:writing:cheapest_above@0", "must be above 0"),
        ("route:writing:cheapest_above@11", "must be above 0"),
        ("route:writing:cheapest_above@150%", "must be above 0"),
        ("route:writing:cheapest_above@high", "must be a number"),
        ("route:writing:cheapest_above@-1", "must be a number"),
        ("route:writing:cheapest_above@nan", "must be a number"),
        ("route:writing:cheapest_above@0.9:0.4", "confidence '0.4'"),
        ("route:writing:cheapest_above@0.9:1", "confidence '1'"),
        ("route:writing:cheapest_above@0.9:80%", "confidence '80%'"),
        ("route::", "unknown strategy ''"),
        ("route:Writing", "must match"),
    ],
)  # fmt: skip
def test_a_malformed_route_form_is_refused_saying_why(model: str, said: str) -> None:
    """Each malformed floor, confidence or form: ``UnknownModel`` naming the model, and
    what is wrong in its reason."""
    with pytest.raises(UnknownModel) as refused:
        pick(model)
    assert refused.value.field == "model"
    assert refused.value.value == model
    assert said in refused.value.reason


def test_a_confidence_without_its_floor_is_invalid_input_saying_how_to_give_one() -> None:
    """``cheapest_above:0.9``: the floor is missing, not the model: ``InvalidInput`` (400,
    not 404 ``model_not_found``) showing ``@0.95:`` and the floor headers."""
    with pytest.raises(InvalidInput) as refused:
        pick("route:writing:cheapest_above:0.9")
    assert not isinstance(refused.value, UnknownModel)
    assert refused.value.field == "model"
    assert "a confidence follows a floor, which is missing" in refused.value.reason
    assert "cheapest_above@0.95:<confidence>" in refused.value.reason
    assert "x-agentladder-quality-floor-share" in refused.value.reason


def test_cheapest_above_takes_its_floor_from_a_header_or_is_refused() -> None:
    """``route:audit:cheapest_above`` with a floor header is that floor; without any floor
    it is 400 on ``model``, saying how to give one."""
    found = pick("route:audit:cheapest_above", x_agentladder_quality_floor_share="0.9")
    assert found.spec is not None
    assert found.spec.quality_floor_share == 0.9
    with pytest.raises(InvalidInput) as refused:
        pick("route:audit:cheapest_above")
    assert refused.value.field == "model"
    assert "cheapest_above@0.95" in refused.value.reason


def test_a_share_header_makes_cheapest_above_and_the_higher_share_holds() -> None:
    """A share header on ``route:audit`` is cheapest_above at that share; on an alias with
    a share, the higher holds, with the alias's confidence and explore share kept."""
    found = pick("route:audit", x_agentladder_quality_floor_share="0.8")
    assert found.spec is not None
    assert (found.spec.strategy, found.spec.quality_floor_share) == ("cheapest_above", 0.8)
    near = pick("near", x_agentladder_quality_floor_share="0.95")
    assert near.spec is not None
    assert (near.spec.quality_floor_share, near.spec.confidence) == (0.95, 0.85)
    assert near.spec.explore_share == 0.0
    lower = pick("near", x_agentladder_quality_floor_share="0.5")
    assert lower.spec is not None
    assert lower.spec.quality_floor_share == 0.9


@pytest.mark.parametrize(
    ("model", "headers", "refused_header", "said"),
    [
        ("route:audit", {FLOOR_HEADER: "7", FLOOR_SHARE_HEADER: "0.9"}, FLOOR_SHARE_HEADER,
         "not both"),
        ("cheap", {FLOOR_SHARE_HEADER: "0.9"}, FLOOR_SHARE_HEADER,
         "send x-agentladder-quality-floor"),
        ("near", {FLOOR_HEADER: "7"}, FLOOR_HEADER, "send x-agentladder-quality-floor-share"),
        ("route:audit:cheapest_above@7.5", {FLOOR_SHARE_HEADER: "0.9"}, FLOOR_SHARE_HEADER,
         "a share cannot be compared"),
        ("route:audit:explore", {FLOOR_SHARE_HEADER: "0.9"}, FLOOR_SHARE_HEADER,
         "cheapest_above only"),
        ("route:audit", {FLOOR_SHARE_HEADER: "0"}, FLOOR_SHARE_HEADER, "above 0"),
        ("route:audit", {FLOOR_SHARE_HEADER: "1.5"}, FLOOR_SHARE_HEADER, "from 0 to 1"),
        ("route:audit", {CONFIDENCE_HEADER: "0.9"}, CONFIDENCE_HEADER, "cheapest_above only"),
        ("cheap", {CONFIDENCE_HEADER: "0.4"}, CONFIDENCE_HEADER, "from 0.5 to 1"),
        ("cheap", {CONFIDENCE_HEADER: "1"}, CONFIDENCE_HEADER, "under 1"),
    ],
)  # fmt: skip
def test_floors_of_two_kinds_and_misplaced_headers_are_refused_by_name(
    model: str, headers: dict[str, str], refused_header: str, said: str
) -> None:
    """A share and a skill cannot be compared before routing: both headers, or a header of
    the other kind than the model's floor, are 400 naming the header; so are a floor or
    confidence with a strategy that has none, and values out of range."""
    with pytest.raises(InvalidInput) as refused:
        choose(model, headers, agents=AGENTS, aliases=ALIASES, attempts=3)
    assert refused.value.field == refused_header
    assert refused.value.value == headers[refused_header]
    assert said in refused.value.reason


def test_the_confidence_header_raises_the_models_own() -> None:
    """With cheapest_above, the higher of the model's and the header's confidence holds."""
    raised = pick("route:audit:cheapest_above@0.9:0.8", x_agentladder_confidence="0.95")
    assert raised.spec is not None
    assert raised.spec.confidence == 0.95
    kept = pick("near", x_agentladder_confidence="0.6")
    assert kept.spec is not None
    assert kept.spec.confidence == 0.85


def test_a_typed_choice_carries_how_it_was_classified() -> None:
    """``typed`` sets the routing's task type, and how and at what cost it was found."""
    found = pick("route").typed("writing", "agent", 0.0001)
    assert found.spec is not None
    assert (found.spec.task_type, found.task_type) == ("writing", "writing")
    assert (found.classified, found.classifier_cost) == ("agent", 0.0001)
    assert not found.untyped
    assert not pick("route:audit").untyped
    assert not pick("alpha").untyped


def test_the_explore_share_is_of_requests_not_of_the_attempts() -> None:
    """The gateway's picks are its attempts, an explored agent first: the share of requests
    asked (the model's, else routing.max_explore_share) is spread over them, so that the
    routing's slots, floor(share x count + u), explore that share of the requests; best
    explores nothing."""
    explore = choose("route:x:explore", {}, agents=AGENTS, aliases={}, attempts=4,
                     explore_share=0.2)  # fmt: skip
    assert explore.spec is not None
    assert explore.spec.explore_share == pytest.approx(0.05)
    one = choose("route:x:explore", {}, agents=AGENTS, aliases={}, attempts=1, explore_share=0.2)
    assert one.spec is not None
    assert one.spec.explore_share == pytest.approx(0.2)
    best = choose("route:x", {}, agents=AGENTS, aliases={}, attempts=4, explore_share=0.2)
    assert best.spec is not None
    assert best.spec.explore_share is None
    near = choose("near", {}, agents=AGENTS, aliases=ALIASES, attempts=3, explore_share=0.2)
    assert near.spec is not None
    assert near.spec.explore_share == 0.0  # the alias's own
