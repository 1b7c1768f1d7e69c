"""``GET /skills/judges``: every source of scores the fit knows, fitted from judgments of
honest judges, one that scores backwards, one alone at its task type and two gateway
clients' feedback (named to an admin only), with the warnings and the shares of
``GET /skills``' scale."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agentladder.services.container import Services
from tests.api.conftest import ADMIN, ORCH, bearer

AGENTS = {f"ag{i}": 2.0 + i for i in range(7)}
JUDGES: dict[str, Callable[[float, random.Random], float]] = {
    "gpt": lambda q, rng: q + rng.gauss(0, 0.5),
    "claude": lambda q, rng: q + 0.8 + rng.gauss(0, 0.5),
    "liar": lambda q, rng: 10 - q,
    "feedback:team-a": lambda q, rng: q + rng.gauss(0, 1),
    "feedback:team-b": lambda q, rng: q + rng.gauss(0, 1),
}


def judgments() -> list[dict[str, Any]]:
    """Two scores at ``qa`` of each agent by each judge; one at ``math`` by ``solo``."""
    rng = random.Random(5)
    out = []
    for agent, quality in AGENTS.items():
        for judge, score in JUDGES.items():
            for index in range(2):
                value = min(10.0, max(0.0, score(quality, rng)))
                out.append({"agent_id": agent, "contract_id": f"{judge}-{index}",
                            "task_type": "qa", "score": value, "judge": judge,
                            "new_agent": True})  # fmt: skip
        out.append({"agent_id": agent, "contract_id": "solo", "task_type": "math",
                    "score": quality, "judge": "solo", "new_agent": True})  # fmt: skip
    return out


def test_the_judges_their_weight_and_warnings(api: Any) -> None:
    """Before a fit: none. After: most evidence first; the backwards judge warned of
    little weight, the lone one of its leniency; the clients one ``judge:feedback`` to a
    reader and named to an admin; the shares are ``GET /skills``' scale's."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        sent = await client.post(
            "/oracle/judgments/batch", json={"judgments": judgments()}, headers=bearer(ORCH)
        )
        assert sent.status_code == 200, sent.text
        before = (await client.get("/skills/judges")).json()
        assert (before["judges"], before["fitted_at"], before["pending"]) == ([], None, 77)
        await client.post("/skills/fit", headers=bearer(ADMIN))
        read = await client.get("/skills/judges")
        assert read.status_code == 200, read.text
        public = read.json()
        assert public["pending"] == 0
        assert public["fitted_at"] is not None
        names = [j["source"] for j in public["judges"]]
        assert names == ["judge:feedback", "judge:claude", "judge:gpt", "judge:liar", "judge:solo"]
        found = {j["source"]: j for j in public["judges"]}
        assert found["judge:feedback"]["observations"] == 28
        assert found["judge:liar"]["honesty"] < 0.5
        assert found["judge:liar"]["warning"].startswith("its scores are given little weight")
        assert found["judge:solo"]["warning"] == "alone: its leniency cannot be learned"
        assert {found[n]["warning"] for n in ("judge:gpt", "judge:claude")} == {None}
        assert found["judge:claude"]["leniency"] > found["judge:gpt"]["leniency"]
        scale = (await client.get("/skills")).json()["scale"]
        for row in scale:
            for listed in row["sources"]:
                here = {t["task_type"]: t for t in found[listed["source"]]["task_types"]}
                assert here[row["task_type"]]["share"] == pytest.approx(listed["share"], abs=1e-9)
        assert found["judge:solo"]["share"] == 0.5  # all of math's scale, none of qa's
        admin = (await client.get("/skills/judges", headers=bearer(ADMIN))).json()
        named = [j["source"] for j in admin["judges"]]
        assert {"judge:feedback:team-a", "judge:feedback:team-b"} <= set(named)
        assert "judge:feedback" not in named
        assert "team" not in read.text

    api(body)
