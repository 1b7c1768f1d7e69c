"""The amplification of issue 23 against a real `agentladder serve` on loopback: three
batches of 1,000 judgments, each naming a new task type for one agent (about 75 KB each).
Before: answered with 72, 214 and 356 MB (every result carried the agent's whole, growing
profile), the server's memory peaking at 848 MB and staying at 433 MB; the agent's page
and the dashboard grew with every task type. Now each item is answered with its outcome
and XP; the agent takes ``oracle.max_task_types_per_agent`` (1,000) task types and every
further one is refused naming ``task_type``; the pages show a page of task types.
On NATS too: past a bound, a judgment is 422 naming ``task_type`` and nothing is stored."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx

from agentladder.natsserver import NatsServer
from tests.served import Server, start_server

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
"""
AGENT = "amp"
KB = 1000


def _batch(number: int, items: int = 1000) -> dict[str, Any]:
    return {
        "judgments": [
            {"agent_id": AGENT, "contract_id": f"c{number}-{i}", "task_type": f"t{number}-{i}",
             "score": 7.5, "new_agent": True}  # an agent the service is told is new
            for i in range(items)
        ]
    }  # fmt: skip


def _peak_mb(server: Server) -> float:
    """The server's peak resident memory (VmHWM), in MB."""
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise LookupError("VmHWM")


def test_batches_of_new_task_types_are_answered_in_proportion(tmp_path: Path) -> None:
    """Each batch's answer is under 400 KB (1,000 outcomes with their XP or the reason of a
    refusal, no profile: a few times the 75 KB sent, whatever the agent holds); the
    first is imported whole, the next two refused item by item naming task_type; the
    profile holds 1,000 specializations; the server's peak memory stays under 400 MB; the
    agent's page and the index are under 300 KB and link the next task types."""
    server = start_server(tmp_path, CONFIG)
    try:
        with httpx.Client(timeout=300) as client:
            answers = [
                client.post(server.url("/oracle/judgments/batch"), json=_batch(n)) for n in range(3)
            ]
            profile = client.get(server.url(f"/oracle/profiles/{AGENT}")).json()
            agent_page = client.get(server.url(f"/dashboard/agents/{AGENT}"))
            index = client.get(server.url("/dashboard"))
            single = client.post(
                server.url("/oracle/judgments"),
                json={"agent_id": AGENT, "contract_id": "one-more", "task_type": "t-new"},
            )
            known = client.post(
                server.url("/oracle/judgments"),
                json={"agent_id": AGENT, "contract_id": "known", "task_type": "t0-7"},
            )
        peak = _peak_mb(server)
    finally:
        server.stop()
    for answer in answers:
        assert answer.status_code == 200, answer.text[:500]
        assert len(answer.content) < 400 * KB, len(answer.content)
    first, *later = (answer.json()["results"] for answer in answers)
    assert {r["status"] for r in first} == {"imported"}
    assert all(r["xp_awarded"] > 0 and "profile" not in r for r in first)
    for results in later:
        assert {r["status"] for r in results} == {"refused"}
        assert all(r["error"].startswith("task_type: ") for r in results)
    assert len(profile["specializations"]) == 1000
    assert single.status_code == 422, single.text
    assert single.json()["error"]["field"] == "task_type"
    assert known.status_code == 200, known.text
    assert peak < 400, peak
    for page in (agent_page, index):
        assert page.status_code == 200
        assert len(page.content) < 300 * KB, len(page.content)
        assert "?types=" in page.text
    assert agent_page.text.count("<tr><td>t") <= 2 * 50  # a page of task types, two tables


def test_on_nats_a_task_type_past_a_bound_is_refused(
    session_nats_server: NatsServer, tmp_path: Path
) -> None:
    """`serve` on NATS with bounds of 3 per agent and 4 in the store: the fourth type of one
    agent is 422 naming task_type and stores nothing; another agent's fifth store-wide
    type is 422 too; a batch refuses only the items past the bounds."""
    url = f"{session_nats_server.url}?prefix=b{uuid.uuid4().hex[:8]}"
    bounds = "oracle:\n  max_task_types_per_agent: 3\n  max_task_types: 4\n"
    server = start_server(tmp_path, CONFIG + bounds, store=url)
    try:
        with httpx.Client(timeout=60) as client:

            def judge(agent: str, contract: str, task_type: str) -> httpx.Response:
                body = {"agent_id": agent, "contract_id": contract, "task_type": task_type,
                        "score": 8.0, "new_agent": True}  # fmt: skip
                return client.post(server.url("/oracle/judgments"), json=body)

            for n in range(3):
                assert judge("a", f"c{n}", f"t{n}").status_code == 200
            refused = judge("a", "c3", "t3")
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"]["field"] == "task_type"
            assert "oracle.max_task_types_per_agent" in refused.json()["error"]["message"]
            history = client.get(server.url("/oracle/profiles/a/history?limit=1000")).json()
            assert "c3" not in {e["contract_id"] for e in history["entries"]}
            assert judge("b", "c0", "t3").status_code == 200  # the store's fourth
            full = judge("b", "c1", "t4")
            assert full.status_code == 422, full.text
            assert "oracle.max_task_types" in full.json()["error"]["message"]
            items = [{"agent_id": "b", "contract_id": f"d{n}", "task_type": t, "score": 7}
                     for n, t in enumerate(["t0", "t5", "t1"])]  # fmt: skip
            batch = client.post(server.url("/oracle/judgments/batch"), json={"judgments": items})
            assert [r["status"] for r in batch.json()["results"]] == [
                "imported", "refused", "imported",
            ]  # fmt: skip
            held = client.get(server.url("/oracle/profiles/b")).json()["specializations"]
            assert sorted(held) == ["t0", "t1", "t3"]
    finally:
        server.stop()
