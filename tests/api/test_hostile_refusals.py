"""Agents cannot raise their own standing: every refused attempt is logged and counted.

Heartbeats carrying rank or XP (``self_promotion``), an agent heartbeating as another
(``impersonation``), an agent token on an orchestrator write (``forbidden_role``, whatever
the body), no token (``unauthenticated``), an unknown or malformed token
(``invalid_token``): after each one, ``/metrics`` shows its counter one higher, the log
has a warning naming the route, the role and the agent, and nothing is stored.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentladder.services.container import Services
from tests.api.conftest import AGENT_A, ORCH, bearer, call_api
from tests.api.test_hostile_corpus import snapshot
from tests.api.test_hostile_served import served_refusals

ORCHESTRATOR_WRITES: list[tuple[str, dict[str, Any]]] = [
    ("/deliberation", {"user_query": "q", "agent_names": ["sim_a", "sim_b"]}),
    ("/deliberations/results",
     {"deliberation_id": "x1", "rounds": [{"agents": {"sim_a": {"aggregated_score": 10}}}]}),
    ("/oracle/judgments", {"agent_id": "sim_a", "contract_id": "c1", "score": 10}),
    ("/oracle/sentinel/check", {"agent_id": "sim_a", "force": True}),
    ("/oracle/validations", {"agent_id": "sim_a", "contract_id": "c1", "passed": True}),
]  # fmt: skip

# (what, path, body, headers, status, reason, role and agent in the log line)
ATTEMPTS: list[tuple[str, str, Any, dict[str, str], int, str, str]] = [
    *[(f"agent token on {path}", path, body, bearer(AGENT_A), 403, "forbidden_role",
       "role=agent agent=sim_a") for path, body in ORCHESTRATOR_WRITES],
    *[(f"agent token with a bad body on {path}", path, {"score": 1e300, "x": [[[]]]},
       bearer(AGENT_A), 403, "forbidden_role", "role=agent agent=sim_a")
      for path, _ in ORCHESTRATOR_WRITES],
    *[(f"no token on {path}", path, body, {}, 401, "unauthenticated", "role=None agent=None")
      for path, body in ORCHESTRATOR_WRITES],
    *[(f"unknown token on {path}", path, body, bearer("forged-token-0123456789"), 401,
       "invalid_token", "role=None agent=None") for path, body in ORCHESTRATOR_WRITES],
    ("basic auth", "/oracle/judgments", ORCHESTRATOR_WRITES[2][1],
     {"authorization": "Basic c2ltX2E6eA=="}, 401, "invalid_token", "role=None agent=None"),
    ("empty bearer", "/oracle/judgments", ORCHESTRATOR_WRITES[2][1],
     {"authorization": "Bearer  "}, 401, "invalid_token", "role=None agent=None"),
    *[(f"heartbeat with {field}", "/agents/heartbeat", {"name": "sim_a", field: value},
       bearer(AGENT_A), 422, "self_promotion", "role=agent agent=sim_a")
      for field, value in (("rank", 9), ("xp", 100_000), ("level", "expert"),
                           ("stats", {"rank": 5, "wins": 99}), ("avg_score", 10.0),
                           ("validation_rate", 0.0), ("privileges", {"max_retries": 99}))],
    ("heartbeat as another agent", "/agents/heartbeat", {"name": "sim_b"}, bearer(AGENT_A),
     403, "impersonation", "role=agent agent=sim_a"),
    ("heartbeat as an unknown agent", "/agents/heartbeat", {"name": "ghost"}, bearer(AGENT_A),
     403, "impersonation", "role=agent agent=sim_a"),
    ("heartbeat without a token", "/agents/heartbeat", {"name": "sim_a"}, {}, 401,
     "unauthenticated", "role=None agent=None"),
    ("orchestrator heartbeating", "/agents/heartbeat", {"name": "sim_a"}, bearer(ORCH), 403,
     "forbidden_role", "role=orchestrator agent=None"),
]  # fmt: skip


def refusals(metrics: str) -> dict[str, float]:
    """``agentladder_refusals_total`` by reason, from the Prometheus text."""
    found = re.findall(
        r'^agentladder_refusals_total\{reason="([a-z_]+)"\} ([0-9.e+]+)$', metrics, re.M
    )
    return {reason: float(count) for reason, count in found}


@pytest.mark.parametrize(
    ("what", "path", "body", "headers", "status", "reason", "who"),
    ATTEMPTS,
    ids=[a[0] for a in ATTEMPTS],
)
def test_each_refused_attempt_is_logged_and_counted_and_stores_nothing(
    caplog: pytest.LogCaptureFixture, what: str, path: str, body: Any,
    headers: dict[str, str], status: int, reason: str, who: str,
) -> None:  # fmt: skip
    """The status, the error shape, the counter one higher, the warning, nothing stored."""

    async def run(client: httpx.AsyncClient, services: Services) -> None:
        before = await snapshot(services)
        counted = refusals((await client.get("/metrics")).text).get(reason, 0.0)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="agentladder"):
            response = await client.post(path, json=body, headers=headers)
        assert response.status_code == status, response.text
        assert set(response.json()) == {"error"}
        await services.orchestrator.settle()
        assert await snapshot(services) == before
        assert refusals((await client.get("/metrics")).text)[reason] == counted + 1
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        line = f"refused POST {path} ({reason}): {who}"
        assert any(w.startswith(line) for w in warnings), (line, warnings)
        assert not any("0123456789" in w for w in warnings)  # a token is never logged

    call_api(run)


def test_refusals_add_up_in_metrics() -> None:
    """Every attempt of the table in one API: each reason counted as many times as tried."""

    async def run(client: httpx.AsyncClient, services: Services) -> None:
        for _, path, body, headers, status, _, _ in ATTEMPTS:
            assert (await client.post(path, json=body, headers=headers)).status_code == status
        expected: dict[str, float] = {}
        for attempt in ATTEMPTS:
            expected[attempt[5]] = expected.get(attempt[5], 0.0) + 1
        assert refusals((await client.get("/metrics")).text) == expected
        assert await services.store.list_deliberations() == []
        assert await services.store.list_profiles() == []

    call_api(run)


def test_a_served_instance_logs_and_counts_refusals(tmp_path: Path) -> None:
    """The same over real HTTP: the warnings are in the server's log, /metrics counts."""
    counted, log = served_refusals(tmp_path)
    assert counted == {"forbidden_role": 1.0, "invalid_token": 1.0, "impersonation": 1.0,
                       "self_promotion": 1.0, "unauthenticated": 1.0}  # fmt: skip
    assert "refused POST /oracle/judgments (forbidden_role): role=agent agent=sim_a" in log
    assert "refused POST /agents/heartbeat (self_promotion): role=agent agent=sim_a" in log
    assert "refused POST /agents/heartbeat (impersonation): role=agent agent=sim_a" in log
