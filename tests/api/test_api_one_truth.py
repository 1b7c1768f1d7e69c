"""One truth: configured and registered agents have a profile and stats from the start;
judgments of agents nobody knows are refused (a typo) unless said new, or accepted when
so configured."""

from __future__ import annotations

import httpx
import pytest

from agentladder.errors import InvalidInput
from agentladder.services.container import Services
from agentladder.services.oracle.verify import verify_store
from tests.api.conftest import ADMIN, CONFIG, ORCH, TOKENS, bearer
from tests.inprocess import call_app

ROOKIE = {"xp": 0, "level": "rookie", "specializations": {}, "achievements": []}


def test_a_configured_agent_has_a_rookie_profile_before_its_first_judgment(
    store_url: str,
) -> None:
    """GET /oracle/profiles/{id} of a configured, never judged agent: rookie, 0 XP, its
    provider; its history is empty; `oracle verify` stays exact, with nothing stored."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        found = await client.get("/oracle/profiles/sim_a")
        assert found.status_code == 200, found.text
        assert found.json() | ROOKIE == found.json()
        assert found.json()["provider"] == "sim"
        assert found.json()["stats"]["total_tasks"] == 0
        history = await client.get("/oracle/profiles/sim_a/history")
        assert history.status_code == 200
        assert history.json()["entries"] == []
        report = await verify_store(services.store, services.settings.oracle)
        assert report.ok
        assert report.agents_checked == 0  # nothing was written for it

    call_app({**CONFIG, **TOKENS}, body, store=store_url)


def test_a_registered_agent_s_profile_keeps_its_declaration_through_judgments(
    store_url: str,
) -> None:
    """An agent registered by heartbeat answers a rookie profile with the provider and
    model it declared; after a judgment naming neither they stay, and the replay of the
    stored events equals the stored profile on every store."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        beat = {"name": "ext_e", "provider_id": "acme", "model_name": "m-1"}
        assert (await client.post("/agents/heartbeat", json=beat)).status_code == 200
        before = (await client.get("/oracle/profiles/ext_e")).json()
        assert (before["provider"], before["model"], before["xp"]) == ("acme", "m-1", 0)
        judged = await client.post(
            "/oracle/judgments", json={"agent_id": "ext_e", "contract_id": "c-1", "score": 9}
        )
        assert judged.status_code == 200, judged.text
        after = (await client.get("/oracle/profiles/ext_e")).json()
        assert (after["provider"], after["model"]) == ("acme", "m-1")
        assert after["xp"] > 0
        report = await verify_store(services.store, services.settings.oracle)
        assert report.ok, report.differences
        assert report.agents_checked == 1

    call_app(CONFIG, body, store=store_url)


def test_an_agent_nobody_registered_has_no_profile() -> None:
    """GET /oracle/profiles/{id} of an agent neither configured nor registered: 404."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        assert (await client.get("/oracle/profiles/nobody")).status_code == 404
        assert (await client.get("/oracle/profiles/nobody/history")).status_code == 404

    call_app(CONFIG, body)


def test_admin_stats_list_every_registered_agent_with_zeros() -> None:
    """GET /admin/api/agents/stats before any deliberation lists every agent GET /agents
    lists (the configured and one registered by heartbeat), each with zero stats."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        beat = {"name": "ext_e", "provider_id": "acme"}
        headers = bearer(ADMIN)
        assert (await client.post("/agents/heartbeat", json=beat, headers=headers)).is_success
        listed = [a["name"] for a in (await client.get("/agents")).json()["agents"]]
        stats = (await client.get("/admin/api/agents/stats", headers=headers)).json()["agents"]
        assert (
            [s["agent_id"] for s in stats]
            == sorted(listed)
            == sorted(["sim_a", "sim_b", "sim_c", "ext_e"])
        )
        for entry in stats:
            assert (entry["rank"], entry["wins"], entry["deliberations_completed"]) == (0, 0, 0)
            assert entry["task_success_ratio"] is None

    call_app({**CONFIG, **TOKENS}, body)


def test_a_judgment_of_an_unknown_id_is_refused_by_default_unless_said_new() -> None:
    """By default (oracle.accept_unregistered: false) a judgment of an id nobody
    configured, registered or judged ("sim-a", a typo) is 422 naming agent_id, the value
    and the closest known ids; nothing is stored, and no agent table or leaderboard lists
    it. With "new_agent": true it is applied and makes its profile; with
    oracle.accept_unregistered: true too, unasked."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        typo = {"agent_id": "sim-a", "contract_id": "c-1", "score": 8}
        refused = await client.post("/oracle/judgments", json=typo, headers=bearer(ORCH))
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert (error["field"], error["value"]) == ("agent_id", "sim-a")
        assert error["suggestions"][0] == "sim_a"
        assert "did you mean sim_a" in error["message"]
        assert (await client.get("/oracle/profiles/sim-a")).status_code == 404
        listed = [a["name"] for a in (await client.get("/agents")).json()["agents"]]
        assert "sim-a" not in listed
        board = (await client.get("/oracle/leaderboard")).json()["entries"]
        assert "sim-a" not in [row["agent_id"] for row in board]
        new = {"agent_id": "outsider", "contract_id": "c-1", "score": 8, "new_agent": True}
        done = await client.post("/oracle/judgments", json=new, headers=bearer(ORCH))
        assert done.status_code == 200, done.text
        assert (await client.get("/oracle/profiles/outsider")).json()["xp"] > 0

    call_app({**CONFIG, **TOKENS}, body)

    async def accepting(client: httpx.AsyncClient, services: Services) -> None:
        judgment = {"agent_id": "outsider", "contract_id": "c-1", "score": 8}
        done = await client.post("/oracle/judgments", json=judgment, headers=bearer(ORCH))
        assert done.status_code == 200, done.text

    call_app({**CONFIG, **TOKENS, "oracle": {"accept_unregistered": True}}, accepting)


def test_judgments_of_unregistered_agents_are_refused_when_configured() -> None:
    """oracle.accept_unregistered: false: a judgment of an agent nobody registered is 422
    naming agent_id and the value, nothing stored; a configured agent's is applied."""
    config = {**CONFIG, **TOKENS, "oracle": {"accept_unregistered": False}}
    path = "/oracle/judgments"
    payload = {"agent_id": "outsider", "contract_id": "c-1", "score": 8}

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        refused = await client.post(path, json=payload, headers=bearer(ORCH))
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert (error["code"], error["field"], error["value"]) == (
            "invalid_input", "agent_id", "outsider",
        )  # fmt: skip
        assert "\n" not in error["message"]
        assert "oracle.accept_unregistered" in error["message"]
        assert (await client.get("/oracle/profiles/outsider")).status_code == 404
        assert await services.store.events("outsider") == []
        mine = {**payload, "agent_id": "sim_b"}
        assert (await client.post(path, json=mine, headers=bearer(ORCH))).status_code == 200

    call_app(config, body)


def test_raw_awards_follow_the_same_rule() -> None:
    """Oracle.award_xp of an agent nobody registered, accept_unregistered false: refused
    naming agent_id; a registered agent's award is applied."""
    config = {**CONFIG, "oracle": {"accept_unregistered": False}}

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        with pytest.raises(InvalidInput) as caught:
            await services.oracle.award_xp("outsider", "bonus", 5, "e-1")
        assert caught.value.field == "agent_id"
        assert await services.store.get_profile("outsider") is None
        award = await services.oracle.award_xp("sim_a", "bonus", 5, "e-1")
        assert award.profile.xp == 5

    call_app(config, body)


def test_a_batch_refuses_unregistered_agents_item_by_item_when_configured() -> None:
    """POST /oracle/judgments/batch with accept_unregistered false: the unknown agent's item
    is refused naming agent_id, the registered agents' items around it are applied."""
    config = {**CONFIG, **TOKENS, "oracle": {"accept_unregistered": False}}
    items = [
        {"agent_id": "sim_a", "contract_id": "c-1", "score": 8},
        {"agent_id": "outsider", "contract_id": "c-1", "score": 8},
        {"agent_id": "sim_b", "contract_id": "c-1", "score": 8},
    ]

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        answer = await client.post(
            "/oracle/judgments/batch", json={"judgments": items}, headers=bearer(ORCH)
        )
        assert answer.status_code == 200, answer.text
        results = answer.json()["results"]
        assert [r["status"] for r in results] == ["imported", "refused", "imported"]
        assert results[1]["error"].startswith("agent_id: ")
        assert await services.store.events("outsider") == []

    call_app(config, body)
