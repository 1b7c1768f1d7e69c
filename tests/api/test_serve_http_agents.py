"""`agentladder serve` on SQLite (no NATS) with two `agentladder agent --server http://...`
processes: they heartbeat over HTTP, take their tasks by long poll, answer them, and are
ranked; an agent token may act only for its own agent. All real processes on loopback."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.served import start_agents, start_server, stop_agents

ADMIN = "admin-token-0123456789"
TOKENS = {"far_a": "far-a-token-0123456789", "far_b": "far-b-token-0123456789"}
CONFIG = f"""
orchestrator:
  heartbeat_interval_s: 0.5
  timeout_s: 10
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: agent, token: {TOKENS["far_a"]}, agent_id: far_a}}
    - {{role: agent, token: {TOKENS["far_b"]}, agent_id: far_b}}
agents:
  - name: far_a
    provider_id: simulated
    remote: true
    backend: {{kind: simulated, quality: 6.5}}
  - name: far_b
    provider_id: simulated
    remote: true
    backend: {{kind: simulated, quality: 8.5}}
  - name: near
    backend: {{kind: simulated, quality: 5.0}}
"""


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_agent_processes_over_http(tmp_path: Path) -> None:
    server = start_server(tmp_path, CONFIG)
    tokens = {name: {"AGENTLADDER_TOKEN": token} for name, token in TOKENS.items()}
    agents = start_agents(tmp_path, ["far_a", "far_b"], ["--server", server.base], tokens)
    try:
        with httpx.Client(base_url=server.base, timeout=30) as client:
            deadline = time.monotonic() + 30
            while True:
                listed = client.get("/agents").json()["agents"]
                status = {a["name"]: a["status"] for a in listed if a["remote"]}
                if status == {"far_a": "online", "far_b": "online"}:
                    break
                assert time.monotonic() < deadline, status
                time.sleep(0.1)
            started = client.post(
                "/deliberation",
                json={"user_query": "Which controls matter?", "agent_names": ["far_a", "far_b"],
                      "scope": "standard"},
                headers=_bearer(ADMIN),
            )  # fmt: skip
            assert started.status_code == 202, started.text
            record = server.settled(started.json()["deliberation_id"])
            assert record["status"] == "completed"
            assert [len(r["proposals"]) for r in record["rounds"]] == [2, 2]
            assert record["scores"] == {"far_a": 6.5, "far_b": 8.5}
            assert record["result"]["agent_id"] == "far_b"
            stats = {a["name"]: a["stats"] for a in client.get("/agents").json()["agents"]}
            assert (stats["far_a"]["rank"], stats["far_b"]["rank"]) == (0, 1)
            assert stats["far_b"]["tasks_completed"] == 4  # 2 proposals, 2 evaluations

            # an agent acts only for itself: polling or answering as another is refused
            poll = client.get("/agents/tasks/next", params={"agent_id": "far_b", "wait_s": 0},
                              headers=_bearer(TOKENS["far_a"]))  # fmt: skip
            assert poll.status_code == 403
            answer = {"agent_id": "far_b", "task_id": "0" * 32, "answer": {"content": "x"}}
            forged = client.post("/agents/tasks/answers", json=answer,
                                 headers=_bearer(TOKENS["far_a"]))  # fmt: skip
            assert forged.status_code == 403
            late = client.post("/agents/tasks/answers", json=answer,
                               headers=_bearer(TOKENS["far_b"]))  # fmt: skip
            assert late.status_code == 404  # no such task awaits an answer
            anonymous = client.get("/agents/tasks/next", params={"agent_id": "far_a"})
            assert anonymous.status_code == 401
            near = client.get("/agents/tasks/next", params={"agent_id": "near", "wait_s": 0},
                              headers=_bearer(ADMIN))  # fmt: skip
            assert near.status_code == 404  # an in-process agent takes no tasks over HTTP
            metrics = client.get("/metrics").text
            assert 'agentladder_refusals_total{reason="impersonation"} 2.0' in metrics
    finally:
        try:
            stop_agents(tmp_path, agents)
        finally:
            server.stop()
