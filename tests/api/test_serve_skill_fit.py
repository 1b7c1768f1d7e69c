"""Waiting for the skill fit through a real `agentladder serve`: answers say what awaits
the fit and when the periodic fitter looks next; admins asking at once over HTTP (``POST
/skills/fit``, ``?fresh=true``) share one fit; a reader is refused; the fitter then fits
new evidence by itself."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx

from tests.served import Server, start_server

ADMIN = "served-fit-admin-token-0123456789"
ORCH = "served-fit-orchestrator-token-0123456789"
INTERVAL_S = 8.0  # long enough that the burst is read before the fitter first looks
CONFIG = f"""
agents:
  - name: sim_a
    backend: {{kind: simulated, quality: 7.0}}
  - name: sim_b
    backend: {{kind: simulated, quality: 9.0}}
skill:
  fit_interval_s: {INTERVAL_S}
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: orchestrator, token: {ORCH}}}
"""


def post_judgments(server: Server, prefix: str, count: int) -> None:
    """``count`` judgments at ``qa``, alternating the two agents, in one batch."""
    judgments = [
        {"agent_id": agent, "contract_id": f"{prefix}-{i}", "task_type": "qa",
         "score": 9.0 if agent == "sim_b" else 6.0}
        for i in range(count) for agent in ("sim_a", "sim_b")
    ]  # fmt: skip
    posted = httpx.post(
        server.url("/oracle/judgments/batch"), json={"judgments": judgments},
        headers={"authorization": f"Bearer {ORCH}"}, timeout=30,
    )  # fmt: skip
    assert posted.status_code == 200, posted.text


def board(server: Server) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.get(server.url("/skills"), timeout=10).json()
    return answer


async def admins_at_once(server: Server) -> list[httpx.Response]:
    """Three POST /skills/fit and three fresh reads, sent together."""
    headers = {"authorization": f"Bearer {ADMIN}"}
    async with httpx.AsyncClient(base_url=server.base, headers=headers, timeout=60) as client:
        return list(
            await asyncio.gather(
                *(client.post("/skills/fit") for _ in range(3)),
                client.get("/skills", params={"fresh": "true"}),
                client.get("/skills", params={"fresh": "true", "task_type": "qa"}),
                client.get("/agents/sim_a/skills", params={"fresh": "true"}),
            )
        )


def test_a_served_fit_shared_by_admins_and_the_fitter(tmp_path: Path) -> None:
    """60 judgments await the first fit, the fitter's next look within its interval; an
    orchestrator's fresh read is 403; six admins at once get one fit (the same time, none
    pending, the board in order); two more judgments are fitted by the fitter alone."""
    server = start_server(tmp_path, CONFIG)
    try:
        post_judgments(server, "burst", 30)
        waiting = board(server)
        assert waiting["pending"] == 60
        assert waiting["next_fit_within_s"] is not None
        assert 0.0 <= waiting["next_fit_within_s"] <= INTERVAL_S
        refused = httpx.get(server.url("/skills"), params={"fresh": "true"},
                            headers={"authorization": f"Bearer {ORCH}"}, timeout=10)  # fmt: skip
        assert refused.status_code == 403
        assert refused.json()["error"]["message"] == (
            "fresh=true (a fit first) needs role admin; this token's role is orchestrator"
        )
        answers = asyncio.run(admins_at_once(server))
        assert [a.status_code for a in answers] == [200] * 6, [a.text for a in answers]
        found = [a.json() for a in answers]
        assert {f["pending"] for f in found} == {0}
        assert len({f["fitted_at"] for f in found}) == 1  # one fit, shared
        fits = found[:3]
        assert sum(f["ran"] for f in fits) <= 1  # the fitter may have run it first
        assert all(f["events"] == 60 for f in fits)
        assert [e["agent_id"] for e in found[3]["entries"]] == ["sim_b", "sim_a"]
        fitted_at = found[0]["fitted_at"]
        post_judgments(server, "later", 2)
        assert board(server)["pending"] == 4
        deadline = time.monotonic() + 4 * INTERVAL_S
        while (now := board(server))["pending"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert now["pending"] == 0, now
        assert now["fitted_at"] > fitted_at
        assert now["next_fit_within_s"] is None
    finally:
        output = server.stop()
    assert "Traceback" not in output
