"""The team fixture: a fresh clone's first afternoon, served for real.

A new team runs six agents on one local OpenAI-compatible server (``provider.py``:
``nokey`` answers 401, ``garbage`` a body that is not JSON, ``slow`` after 2 s,
``limited`` always 429 with ``Retry-After: 30``, ``steady`` and ``stream`` answer, the
latter as server-sent events when asked to stream), behind a real ``agentladder serve``
(memory store) with:

- the six agents, each an ``openai`` backend on the local provider (``backend.model``:
  its personality), each with its own API key variable (``TEAM_KEY_<NAME>``, set);
- tokens for ``admin``, ``orchestrator`` and ``client`` read from environment variables
  (``token_env``: ``TEAM_ADMIN_TOKEN``, ``TEAM_ORCHESTRATOR_TOKEN``,
  ``TEAM_CLIENT_TOKEN``), the client named ``team`` with a gateway budget of $5 a day;
- ``orchestrator.timeout_s`` 10 (the slow agent answers well within it) and the other
  settings at their defaults (``orchestrator.max_retry_wait_s`` 5).

Fixtures:

- ``team_provider`` (session): the provider; ``delays`` and ``retry_after`` may be changed
  by a test (put them back: ``provider_settings`` does it for you).
- ``team`` (module): one served team shared by a module's tests. Its agents' health is
  the server's memory: a test that needs an agent not yet called (not down) starts its
  own with ``start_team``.
- ``start_team`` (function): ``start_team(**changes)`` starts another served team (the
  same configuration; ``orchestrator={...}`` or ``extra_yaml`` change it), stopped by its
  pid at the end of the test.

A ``Team`` knows its server, provider and tokens, and asks with the right one:
``team.post(path, json, role=...)``, ``team.get(path)``, ``team.deliberate(agents,
scope)`` (the deliberation's id), ``team.finished(id)`` (its record once it ended),
``team.page(path)`` (a dashboard page's HTML).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.served import Server, start_server
from tests.team.provider import PERSONALITIES, TeamProvider

TOKENS = {
    "admin": "team-admin-token-0123456789",
    "orchestrator": "team-orchestrator-token-0123456789",
    "client": "team-client-token-0123456789",
}
TOKEN_ENV = {role: f"TEAM_{role.upper()}_TOKEN" for role in TOKENS}
KEYS = {name: f"sk-team-{name}-0123456789" for name in PERSONALITIES}
KEY_ENV = {name: f"TEAM_KEY_{name.upper()}" for name in PERSONALITIES}
TIMEOUT_S = 10.0
"""``orchestrator.timeout_s`` of the team's server."""


def team_config(
    base_url: str, orchestrator: dict[str, Any] | None = None, extra_yaml: str = ""
) -> str:
    """The team's configuration: six agents on the provider at ``base_url``, tokens from
    the environment, a client budget; ``orchestrator`` settings over the team's."""
    settings = {"timeout_s": TIMEOUT_S, **(orchestrator or {})}
    shown = ", ".join(f"{key}: {value}" for key, value in settings.items())
    agents = "".join(
        f"""
  - name: {name}
    model_name: {name}-model
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    backend: {{kind: openai, base_url: "{base_url}", model: {name},
               api_key_env: {KEY_ENV[name]}}}"""
        for name in PERSONALITIES
    )
    return f"""
api:
  tokens:
    - {{role: admin, token_env: {TOKEN_ENV["admin"]}}}
    - {{role: orchestrator, token_env: {TOKEN_ENV["orchestrator"]}}}
    - {{role: client, token_env: {TOKEN_ENV["client"]}, name: team,
       budget: {{limit_usd: 5, period: day}}}}
orchestrator: {{{shown}}}
agents:{agents}
{extra_yaml}"""


@dataclass
class Team:
    """A served team: the server, its provider, and how to ask it."""

    server: Server
    provider: TeamProvider

    def headers(self, role: str | None) -> dict[str, str]:
        """The bearer header of ``role`` (none for None)."""
        return {} if role is None else {"Authorization": f"Bearer {TOKENS[role]}"}

    def get(self, path: str, role: str | None = None) -> httpx.Response:
        """GET ``path`` (reads need no token)."""
        return httpx.get(self.server.url(path), headers=self.headers(role), timeout=30)

    def post(self, path: str, body: Any, role: str | None = "orchestrator") -> httpx.Response:
        """POST ``body`` to ``path`` with ``role``'s token."""
        return httpx.post(self.server.url(path), json=body, headers=self.headers(role), timeout=30)

    def deliberate(self, agents: list[str], scope: str = "quick", **extra: Any) -> str:
        """Start a deliberation among ``agents`` (202 expected); its id."""
        body = {"user_query": "Which controls matter most?", "agent_names": agents,
                "scope": scope, **extra}  # fmt: skip
        started = self.post("/deliberation", body)
        assert started.status_code == 202, started.text
        identifier: str = started.json()["deliberation_id"]
        return identifier

    def record(self, identifier: str) -> dict[str, Any]:
        """``GET /deliberation/{id}``."""
        found = self.get(f"/deliberation/{identifier}")
        assert found.status_code == 200, found.text
        record: dict[str, Any] = found.json()
        return record

    def finished(self, identifier: str, within_s: float = 120.0) -> dict[str, Any]:
        """The deliberation's record once it is completed or failed."""
        deadline = time.monotonic() + within_s
        while True:
            record = self.record(identifier)
            if record["status"] in ("completed", "failed"):
                return record
            assert time.monotonic() < deadline, f"{identifier} still {record['status']}"
            time.sleep(0.05)

    def page(self, path: str) -> str:
        """A dashboard page's HTML (200 expected)."""
        found = self.get(path)
        assert found.status_code == 200, found.text[-500:]
        return found.text


@pytest.fixture(scope="session")
def team_provider() -> Iterator[TeamProvider]:
    """The team's provider for the session, stopped (its threads joined) at the end."""
    provider = TeamProvider()
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture
def provider_settings(team_provider: TeamProvider) -> Iterator[TeamProvider]:
    """The provider, its ``delays`` and ``retry_after`` put back after the test."""
    delays, retry_after = dict(team_provider.delays), dict(team_provider.retry_after)
    try:
        yield team_provider
    finally:
        team_provider.delays.clear()
        team_provider.delays.update(delays)
        team_provider.retry_after.clear()
        team_provider.retry_after.update(retry_after)


def _environment(patch: pytest.MonkeyPatch) -> None:
    for role, name in TOKEN_ENV.items():
        patch.setenv(name, TOKENS[role])
    for agent, name in KEY_ENV.items():
        patch.setenv(name, KEYS[agent])


def _start(folder: Path, provider: TeamProvider, **changes: Any) -> Team:
    with pytest.MonkeyPatch.context() as patch:  # the served process inherits them
        _environment(patch)
        server = start_server(folder, team_config(provider.url, **changes), store="memory://")
    return Team(server, provider)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory, team_provider: TeamProvider) -> Iterator[Team]:
    """One served team for the module, stopped by its pid at the end."""
    started = _start(tmp_path_factory.mktemp("team"), team_provider)
    try:
        yield started
    finally:
        started.server.stop()


@pytest.fixture
def start_team(
    tmp_path_factory: pytest.TempPathFactory, team_provider: TeamProvider
) -> Iterator[Callable[..., Team]]:
    """``start_team(**changes)``: another served team, stopped at the end of the test."""
    started: list[Team] = []

    def start(**changes: Any) -> Team:
        one = _start(tmp_path_factory.mktemp("team"), team_provider, **changes)
        started.append(one)
        return one

    try:
        yield start
    finally:
        for one in started:
            one.server.stop()
