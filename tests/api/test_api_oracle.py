"""The Oracle endpoints: judgments (roles, idempotency, conflicts), profiles, ledger, boards."""

from __future__ import annotations

from typing import Any

import httpx

from agentladder.services.container import Services
from tests.api.conftest import AGENT_A, ORCH, bearer

SPEC_JUDGMENT = {
    "agent_id": "gemini-2.0-flash", "contract_id": "img-gen-001", "task_type": "image_generation",
    "score": 8.5, "retries": 1, "duration_ms": 5000, "cost": 0.05, "budget": 0.10,
    "provider": "google", "model": "gemini-2.0-flash", "new_agent": True,
}  # fmt: skip
"""The specification's judgment, of an agent the service is told is new."""


def test_the_specification_judgment_over_http(api: Any) -> None:
    """POST /oracle/judgments: 35 XP itemized; again: duplicate; other payload: 409."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        first = await client.post("/oracle/judgments", json=SPEC_JUDGMENT, headers=bearer(ORCH))
        assert first.status_code == 200, first.text
        award = first.json()
        assert award["xp_awarded"] == 35
        assert [(b["event"], b["xp"]) for b in award["breakdown"]] == [
            ("task_completed", 10), ("quality_above_8", 15), ("under_budget", 10),
        ]  # fmt: skip
        assert award["achievements"] == [{"name": "First Steps", "xp": 10}]
        assert award["level_up"] is None
        assert award["duplicate"] is False
        again = await client.post("/oracle/judgments", json=SPEC_JUDGMENT, headers=bearer(ORCH))
        assert again.json()["duplicate"] is True
        changed = {**SPEC_JUDGMENT, "score": 9.9}
        conflict = await client.post("/oracle/judgments", json=changed, headers=bearer(ORCH))
        assert conflict.status_code == 409
        assert conflict.json()["error"]["code"] == "conflict"

    api(body)


def test_an_agent_token_cannot_post_judgments(api: Any) -> None:
    """Agents never award themselves XP: 403 for an agent token, 401 without one."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        mine = {**SPEC_JUDGMENT, "agent_id": "sim_a"}
        assert (
            await client.post("/oracle/judgments", json=mine, headers=bearer(AGENT_A))
        ).status_code == 403
        assert (await client.post("/oracle/judgments", json=mine)).status_code == 401
        assert (await client.get("/oracle/profiles/sim_a")).json()["xp"] == 0  # nothing awarded

    api(body)


def test_bad_judgments_are_422_naming_the_field(api: Any) -> None:
    """Score over 10, negative cost, a bad task type, rank fields: 422 with the field."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for field, value in (("score", 11), ("cost", -1), ("task_type", "Bad Type"), ("xp", 500)):
            response = await client.post(
                "/oracle/judgments", json={**SPEC_JUDGMENT, field: value}, headers=bearer(ORCH)
            )
            assert response.status_code == 422, (field, response.text)
            assert response.json()["error"]["field"] == field
        nan = await client.post(
            "/oracle/judgments",
            content=b'{"agent_id": "a", "contract_id": "c", "score": NaN}',
            headers={**bearer(ORCH), "content-type": "application/json"},
        )
        assert nan.status_code == 422
        assert (await client.get("/oracle/leaderboard")).json()["entries"] == []

    api(body)


def test_profile_history_leaderboard_rates_and_privileges(api: Any) -> None:
    """After judgments: the profile, its ledger pages, boards, rates and privileges."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for n in range(3):
            payload = {**SPEC_JUDGMENT, "contract_id": f"c{n}", "score": 9.5, "retries": 0}
            assert (
                await client.post("/oracle/judgments", json=payload, headers=bearer(ORCH))
            ).status_code == 200
        profile = (await client.get("/oracle/profiles/gemini-2.0-flash")).json()
        assert set(profile) == {
            "id",
            "provider",
            "model",
            "xp",
            "level",
            "specializations",
            "achievements",
            "stats",
        }
        assert profile["provider"] == "google"
        history = (
            await client.get("/oracle/profiles/gemini-2.0-flash/history", params={"limit": 2})
        ).json()
        assert len(history["entries"]) == 2
        board = (
            await client.get("/oracle/leaderboard", params={"task_type": "image_generation"})
        ).json()
        assert board["entries"][0]["agent_id"] == "gemini-2.0-flash"
        assert board["entries"][0]["specialization_xp"] > 0
        rate = (await client.get("/oracle/agents/gemini-2.0-flash/validation-rate")).json()
        assert rate == {"agent_id": "gemini-2.0-flash", "task_type": None, "level": "reliable",
                        "validation_rate": 0.2, "effective_rate": 0.2, "reason": "level",
                        "clearance_left": None, "judged": 3,
                        "failure_share": 0.0}  # fmt: skip
        privileges = (await client.get("/oracle/agents/nobody/privileges")).json()
        assert privileges["level"] == "rookie"
        assert privileges["max_retries"] == 3
        too_many = await client.get("/oracle/leaderboard", params={"limit": 1001})
        assert too_many.status_code == 422

    api(body)


def test_sentinel_check_and_validations(api: Any) -> None:
    """POST /oracle/sentinel/check decides; POST /oracle/validations records a failed check."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        await client.post("/oracle/judgments", json=SPEC_JUDGMENT, headers=bearer(ORCH))
        check = await client.post(
            "/oracle/sentinel/check", json={"agent_id": "gemini-2.0-flash"}, headers=bearer(ORCH)
        )
        assert check.json()["validate"] is True
        assert check.json()["reason"] == "sampled"
        verdict = await client.post(
            "/oracle/validations",
            json={"agent_id": "gemini-2.0-flash", "contract_id": "img-gen-001", "passed": False},
            headers=bearer(ORCH),
        )
        assert verdict.status_code == 200
        assert verdict.json()["counted_as_failure"] is True
        profile = (await client.get("/oracle/profiles/gemini-2.0-flash")).json()
        assert profile["stats"]["success_rate"] == 0.0
        assert profile["xp"] == 45

    api(body)
