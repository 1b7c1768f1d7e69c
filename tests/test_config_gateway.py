"""The ``gateway:`` section and client tokens in the configuration."""

from __future__ import annotations

import pytest

from agentladder.config import parse_settings
from agentladder.errors import InvalidInput

TOKEN = "t" * 16


def test_a_client_token_carries_a_name_and_a_budget() -> None:
    """``role: client`` with ``name`` and ``budget`` parses (period: month by default)."""
    settings = parse_settings(
        {
            "api": {
                "tokens": [
                    {
                        "role": "client",
                        "token": TOKEN,
                        "name": "team-a",
                        "budget": {"limit_usd": 25},
                    }
                ]
            }
        }
    )
    token = settings.api.tokens[0]
    assert token.role == "client"
    assert token.name == "team-a"
    assert token.budget is not None
    assert (token.budget.limit_usd, token.budget.period) == (25.0, "month")


def test_a_budget_is_for_client_tokens_only() -> None:
    """An orchestrator token with a budget is refused, naming the token."""
    with pytest.raises(InvalidInput) as refused:
        parse_settings(
            {
                "api": {
                    "tokens": [{"role": "orchestrator", "token": TOKEN, "budget": {"limit_usd": 5}}]
                }
            }
        )
    assert refused.value.field == "api.tokens[0]"
    assert "budget is for role client only" in refused.value.reason


def test_a_client_token_needs_a_name() -> None:
    """A client token without a name is refused, naming ``api.tokens[i].name``: its
    feedback and spend are kept under its own name."""
    with pytest.raises(InvalidInput) as refused:
        parse_settings(
            {
                "api": {
                    "tokens": [
                        {"role": "admin", "token": TOKEN},
                        {"role": "client", "token": TOKEN, "budget": {"limit_usd": 5}},
                    ]
                }
            }
        )
    assert refused.value.field == "api.tokens[1].name"
    assert refused.value.value is None
    assert "is required for role client" in refused.value.reason
    assert str(refused.value).count("\n") == 0


@pytest.mark.parametrize("role", ["admin", "orchestrator", "client", "metrics"])
def test_two_tokens_with_one_name_are_refused(role: str) -> None:
    """A second token (of any role) named like an earlier one is refused at its own
    ``name``, with the value and the first token's path."""
    tokens = [
        {"role": "client", "token": TOKEN, "name": "team-a"},
        {"role": "client", "token": TOKEN, "name": "team-b"},
        {"role": role, "token": TOKEN, "name": "team-a"},
    ]
    with pytest.raises(InvalidInput) as refused:
        parse_settings({"api": {"tokens": tokens}})
    assert refused.value.field == "api.tokens[2].name"
    assert refused.value.value == "team-a"
    assert "duplicates api.tokens[0].name" in refused.value.reason


def test_tokens_of_other_roles_need_no_name() -> None:
    """Admin, orchestrator, agent and metrics tokens without a name parse, and two of
    them without names are not duplicates."""
    settings = parse_settings(
        {
            "api": {
                "tokens": [
                    {"role": "admin", "token": TOKEN},
                    {"role": "orchestrator", "token": TOKEN},
                    {"role": "orchestrator", "token_env": "ORCH_TOKEN"},
                    {"role": "agent", "token": TOKEN, "agent_id": "alpha"},
                    {"role": "metrics", "token_env": "METRICS_TOKEN"},
                ]
            }
        }
    )
    assert [t.name for t in settings.api.tokens] == [None] * 5


@pytest.mark.parametrize(
    ("gateway", "field"),
    [
        ({"max_attempts": 0}, "gateway.max_attempts"),
        ({"models": {"bad name": {"task_type": "audit"}}}, "gateway.models"),
        ({"models": {"cheap": {"strategy": "cheapest_above"}}}, "gateway.models.cheap"),
        ({"models": {"smart": {"task_type": "Audit!"}}}, "gateway.models.smart.task_type"),
        ({"modles": {}}, "gateway.modles"),
    ],
)
def test_a_bad_gateway_section_is_refused_naming_the_key(
    gateway: dict[str, object], field: str
) -> None:
    """Attempts out of range, an alias name or routing that cannot be, a typo: refused
    with the key's path."""
    with pytest.raises(InvalidInput) as refused:
        parse_settings({"gateway": gateway})
    assert refused.value.field == field


def test_aliases_parse_with_their_routing() -> None:
    """An alias keeps its task type, strategy, floor, tags and cap."""
    settings = parse_settings(
        {
            "gateway": {
                "max_attempts": 2,
                "models": {
                    "cheap": {
                        "task_type": "audit",
                        "strategy": "cheapest_above",
                        "quality_floor": 7,
                        "tags": ["sql"],
                        "max_cost_per_round": 0.1,
                    }
                },
            }
        }
    )
    alias = settings.gateway.models["cheap"]
    assert settings.gateway.max_attempts == 2
    assert (alias.task_type, alias.strategy, alias.quality_floor) == ("audit", "cheapest_above", 7)
    assert (alias.tags, alias.max_cost_per_round) == (("sql",), 0.1)
