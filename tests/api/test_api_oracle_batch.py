"""POST /oracle/judgments/batch: orchestrator role, one result per item in order, each
item what POST /oracle/judgments makes of it (its outcome and XP, not the profile), a
documented limit."""

from __future__ import annotations

from typing import Any

import httpx

from agentladder.api.routes.oracle_batch import BATCH_MAX
from agentladder.services.container import Services
from agentladder.services.oracle.verify import verify_store
from tests.api.conftest import AGENT_A, ORCH, bearer

PATH = "/oracle/judgments/batch"


def _judgment(agent: str, contract: str, score: float = 8.5) -> dict[str, Any]:
    return {"agent_id": agent, "contract_id": contract, "task_type": "sql", "score": score,
            "cost": 0.01, "budget": 0.02}  # fmt: skip


def test_a_batch_answers_each_item_in_order(api: Any) -> None:
    """Imported, duplicate within the batch, conflict: in order, each what the single
    endpoint makes of it; verify passes."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        items = [
            _judgment("sim_a", "c1"),
            _judgment("sim_b", "c1"),
            _judgment("sim_a", "c1"),
            _judgment("sim_a", "c1", score=2.0),
            _judgment("sim_a", "c2", score=3.0),
        ]
        answer = await client.post(PATH, json={"judgments": items}, headers=bearer(ORCH))
        assert answer.status_code == 200, answer.text
        results = answer.json()["results"]
        assert [r["status"] for r in results] == [
            "imported", "imported", "duplicate", "conflict", "imported",
        ]  # fmt: skip
        assert [(r["agent_id"], r["contract_id"]) for r in results] == [
            (item["agent_id"], item["contract_id"]) for item in items
        ]
        alone = await client.post(
            "/oracle/judgments", json=_judgment("sim_c", "c1"), headers=bearer(ORCH)
        )
        assert results[0]["xp_awarded"] == alone.json()["xp_awarded"]
        assert results[0]["total_xp"] == alone.json()["total_xp"]
        assert "profile" not in results[0]
        assert results[2]["xp_awarded"] == results[0]["xp_awarded"]  # the first award's
        assert results[3]["xp_awarded"] is None
        assert results[3]["error"].startswith("contract_id: ")
        keys = [e.key for e in await services.store.events("sim_a")]
        assert keys == ["judgment:c1", "judgment:c2"]
        single = await client.post(
            "/oracle/judgments", json=_judgment("sim_b", "c1"), headers=bearer(ORCH)
        )
        assert single.json()["duplicate"] is True
        assert single.json()["total_xp"] == results[1]["total_xp"]
        report = await verify_store(services.store, services.settings.oracle)
        assert report.ok

    api(body)


def test_an_invalid_item_refuses_the_whole_batch(api: Any) -> None:
    """An item that is no judgment: 422 naming it (judgments.1.score), nothing applied."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        items = [_judgment("sim_a", "c1"), {**_judgment("sim_a", "c2"), "score": 11}]
        answer = await client.post(PATH, json={"judgments": items}, headers=bearer(ORCH))
        assert answer.status_code == 422, answer.text
        assert "judgments.1.score" in answer.text
        assert await services.store.get_profile("sim_a") is None

    api(body)


def test_a_batch_is_the_orchestrators_and_has_a_limit(api: Any) -> None:
    """403 for an agent token, 401 without; more than BATCH_MAX items or none: 422,
    nothing stored."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        one = {"judgments": [_judgment("sim_a", "c1")]}
        assert (await client.post(PATH, json=one, headers=bearer(AGENT_A))).status_code == 403
        assert (await client.post(PATH, json=one)).status_code == 401
        many = {"judgments": [_judgment("sim_a", f"c{i}") for i in range(BATCH_MAX + 1)]}
        too_many = await client.post(PATH, json=many, headers=bearer(ORCH))
        assert too_many.status_code == 422, too_many.text
        empty = await client.post(PATH, json={"judgments": []}, headers=bearer(ORCH))
        assert empty.status_code == 422
        assert await services.store.get_profile("sim_a") is None

    api(body)


def test_batch_items_marked_history_start_no_probation(api: Any) -> None:
    """A failed item marked history (past work) counts as a failure but starts no
    probation; the same failure live does; verify replays both alike."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        items = [
            {**_judgment("sim_a", "old", score=1.0), "success": False, "history": True},
            {**_judgment("sim_b", "now", score=1.0), "success": False},
        ]
        answer = await client.post(PATH, json={"judgments": items}, headers=bearer(ORCH))
        assert answer.status_code == 200, answer.text
        old = (await client.get("/oracle/profiles/sim_a")).json()
        assert (old["stats"]["total_tasks"], old["stats"]["successful_tasks"]) == (1, 0)
        assert "probation" not in old
        live = (await client.get("/oracle/profiles/sim_b")).json()
        assert live["probation"]["sql"]["cause"] == "failed_judgment"
        report = await verify_store(services.store, services.settings.oracle)
        assert report.ok, report.differences

    api(body)
