"""``token_notes``: what ``config check`` and ``serve`` say about tokens whose variables
are unset, for each mix of set and unset (a pure function of the settings and the
environment)."""

from __future__ import annotations

from agentladder.api.auth import token_notes
from agentladder.config import ApiSettings

SET = "a-token-of-sixteen-characters"


def api(*entries: dict[str, str]) -> ApiSettings:
    """``api`` settings with these token entries."""
    return ApiSettings.model_validate({"tokens": list(entries)})


def test_nothing_is_said_when_every_token_is_set_or_none_is_configured() -> None:
    """Inline tokens, variables that are set, or no token at all: no note."""
    assert token_notes(api()) == []
    assert token_notes(api({"role": "admin", "token": SET})) == []
    both = api({"role": "admin", "token_env": "A"}, {"role": "orchestrator", "token_env": "O"})
    assert token_notes(both, {"A": SET, "O": SET}) == []


def test_each_unset_variable_is_named_with_its_role_then_what_serve_accepts() -> None:
    """None set: no write at all; some set: writes with those roles' tokens only; only a
    metrics token set: no write."""
    settings = api(
        {"role": "admin", "token_env": "A"},
        {"role": "orchestrator", "token_env": "O"},
        {"role": "metrics", "token_env": "M"},
    )
    assert token_notes(settings, {}) == [
        "the admin token's variable A is not set: that token is disabled",
        "the orchestrator token's variable O is not set: that token is disabled",
        "the metrics token's variable M is not set: that token is disabled",
        "no token is set: serve will accept no write at all (tokens are configured, so"
        " loopback clients are not trusted either); reads stay open",
    ]
    assert token_notes(settings, {"O": SET, "A": ""})[-1] == (
        "only the orchestrator token is set: serve will accept writes with orchestrator tokens only"
    )
    assert token_notes(settings, {"O": SET, "A": SET}) == [
        "the metrics token's variable M is not set: that token is disabled",
        "only the admin and orchestrator tokens are set: serve will accept writes with admin"
        " or orchestrator tokens only",
    ]
    assert token_notes(settings, {"M": SET})[-1] == (
        "no writing role has a token set: serve will accept no write"
    )
