"""A served gateway in front of local OpenAI-compatible providers (``provider.py``).

Agents (their ``backend.model`` is the provider's behaviour): ``alpha`` answers (tag
``sql``), ``beta`` answers 500, ``gamma`` answers after 3 s with a timeout of 0.5 s,
``delta`` answers 429 with Retry-After, ``epsilon`` breaks its streams after one piece;
``sim`` is simulated (not behind the gateway).
Each has its own API key variable, set for the served process. Judgments at ``audit``
make ``best`` try beta, then gamma, then alpha; delta last.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gateway.provider import Providers
from tests.served import Server, free_port, seed_scores, start_server

CLIENT = "client-token-0123456789"
ORCH = "orchestrator-token-0123456789"
KEYS = {name: f"sk-{name}-secret" for name in ("alpha", "beta", "gamma", "delta", "epsilon")}
ORDER = {"beta": 9.8, "gamma": 9.2, "alpha": 8.2, "delta": 3.0}
"""Each agent's score at ``audit`` in the judgments posted: best's order."""


def config(base_url: str) -> str:
    """The served configuration, its agents on the providers at ``base_url``."""

    def agent(name: str, model: str, extra: str = "", tags: str = "[]") -> str:
        return f"""
  - name: {name}
    model_name: {name}-model
    input_price_per_mtok: 1.0
    output_price_per_mtok: 2.0
    capability_tags: {tags}
    backend: {{kind: openai, base_url: "{base_url}", model: "{model}",
               api_key_env: GW_KEY_{name.upper()}{extra}}}"""

    return f"""
api:
  tokens:
    - {{role: client, token: {CLIENT}, name: team-a, budget: {{limit_usd: 5, period: day}}}}
    - {{role: orchestrator, token: {ORCH}}}
gateway:
  max_attempts: 3
  models:
    smart: {{task_type: audit}}
    flaky: {{task_type: audit, tags: [flaky]}}
agents:{agent("alpha", "good:alpha", tags="[sql]")}{agent("beta", "fail:beta", tags="[flaky]")}\
{agent("gamma", "slow:3000", extra=", timeout_s: 0.5")}\
{agent("delta", "ratelimit:30", tags="[flaky]")}{agent("epsilon", "break:epsilon")}
  - name: sim
    backend: {{kind: simulated, quality: 7.0}}
"""


@pytest.fixture(scope="module")
def providers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Providers]:
    """The provider process for the module, stopped by its pid at the end."""
    started = Providers(tmp_path_factory.mktemp("providers"), free_port())
    try:
        yield started
    finally:
        started.stop()


def _served(
    folder: Path, providers: Providers, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Server]:
    """`agentladder serve` with the agents' keys set and the judgments that order them,
    stopped by its pid at the end."""
    for name, key in KEYS.items():
        monkeypatch.setenv(f"GW_KEY_{name.upper()}", key)
    server = start_server(folder, config(providers.base_url))
    try:
        seed_scores(server, ORDER, ORCH)
        yield server
    finally:
        server.stop()
    assert os.environ.get("GW_KEY_ALPHA") == KEYS["alpha"]


@pytest.fixture
def gateway(
    tmp_path: Path, providers: Providers, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Server]:
    """A fresh gateway for this test alone: for a test that counts what the server
    recorded (metrics, health, budgets) or makes agents down."""
    yield from _served(tmp_path, providers, monkeypatch)


@pytest.fixture(scope="module")
def shared_gateway(
    tmp_path_factory: pytest.TempPathFactory, providers: Providers
) -> Iterator[Server]:
    """One gateway for the module's tests that only ask and read what they asked (each
    start costs seconds): such a test must not depend on what another one did, nor change
    what another one reads (no agent made down, no count asserted)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield from _served(tmp_path_factory.mktemp("gateway"), providers, monkeypatch)
