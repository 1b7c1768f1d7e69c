"""What a gateway request's ``model`` and headers ask for (``services/gateway/choice.py``)."""

from __future__ import annotations

import pytest

from agentladder.domain.routing.spec import Strategy
from agentladder.errors import InvalidInput, UnknownModel
from agentladder.services.gateway.choice import (
    FLOOR_HEADER,
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
    """``route:audit`` is best at audit; ``route:audit:explore`` explores; up to the
    attempts are routed (at least 2, routing's least count)."""
    best = pick("route:audit")
    assert best.spec is not None
    assert (best.spec.task_type, best.spec.strategy, best.spec.count) == ("audit", "best", 3)
    explore = pick("route:audit:explore")
    assert explore.spec is not None
    assert explore.spec.strategy is Strategy.EXPLORE
    single = choose("route:x", {}, agents=AGENTS, aliases={}, attempts=1)
    assert single.spec is not None
    assert single.spec.count == 2


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
