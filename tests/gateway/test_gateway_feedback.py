"""A caller's feedback (``POST /v1/feedback``) with the gateway in-process, its request made
with OpenAI's async client (``test_gateway_checks.run``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest

from agentladder.api.app import create_app
from agentladder.services.container import Services
from agentladder.services.oracle.service import judgment_key
from agentladder.store.skills import SkillEvent
from tests.gateway.judging import Judging, gateway_config
from tests.gateway.provider import Providers
from tests.gateway.test_gateway_checks import ask, run, trusted

TEAM_A = "team-a-token-0123456789"
TEAM_B = "team-b-token-0123456789"


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' API key variables."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    monkeypatch.setenv("GW_KEY_BRAVO", "sk-bravo-secret")


def config(base_url: str) -> dict[str, Any]:
    """Two client tokens, team-a and team-b, and an admin."""
    found = gateway_config(base_url)
    found["api"]["tokens"] = [
        {"role": "client", "token": TEAM_A, "name": "team-a"},
        {"role": "client", "token": TEAM_B, "name": "team-b"},
    ]
    return found


async def give(services: Services, token: str, body: object) -> httpx.Response:
    """``POST /v1/feedback`` to the API over the same services, with ``token``."""
    transport = httpx.ASGITransport(app=create_app(services), client=("127.0.0.1", 5000))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        return await http.post(
            "/v1/feedback", json=body, headers={"Authorization": f"Bearer {token}"}
        )


async def skill_event(services: Services, key: str) -> SkillEvent | None:
    """The stored skill event of ``key``, if any."""
    found = [e for e in await services.store.skill_events(after=0, limit=100_000) if e.key == key]
    return found[0] if found else None


def test_thumbs_and_scores_become_skill_evidence_by_feedback_of_the_token(
    providers: Providers,
) -> None:
    """Thumbs up is a score of 10 by ``feedback:team-a`` of the agent that answered, at the
    request's task type, keyed by ``<contract>:feedback`` and deferred to the next fit; a
    score is kept as given; no Oracle event is written (no XP), and a thumbs down starts
    no probation."""

    async def body(client: openai.AsyncOpenAI, services: Services, _: Judging) -> None:
        await trusted(services, "bravo")  # past rookie: a failed judgment would be probation
        first = (await ask(client))["x-agentladder-contract"]
        answer = await give(services, TEAM_A, {"contract_id": first, "thumbs": "up",
                                             "comment": "spot on"})  # fmt: skip
        assert answer.status_code == 200, answer.text
        found = answer.json()
        assert found["agent_id"] == "alpha"
        assert found["judge"] == "feedback:team-a"
        assert (found["score"], found["task_type"], found["duplicate"]) == (10.0, "audit", False)
        assert (found["xp_awarded"], found["counts_as"]) == (0, "skill evidence")
        assert await services.store.get_event("alpha", judgment_key(f"{first}:feedback")) is None
        event = await skill_event(services, f"judgment:alpha:{first}:feedback")
        assert event is not None
        stored = json.loads(event.payload)
        assert (stored["judge"], stored["score"], stored["deferred"]) == (
            "feedback:team-a", 10.0, True,
        )  # fmt: skip
        second = (await ask(client, "bravo"))["x-agentladder-contract"]
        scored = await give(services, TEAM_A, {"contract_id": second, "score": 6.5})
        assert scored.status_code == 200, scored.text
        assert (scored.json()["agent_id"], scored.json()["score"]) == ("bravo", 6.5)
        before = await services.oracle.get_profile("bravo")
        third = (await ask(client, "bravo"))["x-agentladder-contract"]
        down = await give(services, TEAM_A, {"contract_id": third, "thumbs": "down"})
        assert down.json()["score"] == 0.0
        rate = await services.oracle.get_effective_rate("bravo", "audit")
        assert rate.reason.value != "probation"
        assert (await services.oracle.get_profile("bravo")).xp == before.xp

    run(config(providers.base_url), body, Judging(), key=TEAM_A)


def test_forty_thumbs_up_buy_no_xp_level_or_rate_and_move_skill_within_its_interval(
    providers: Providers,
) -> None:
    """An agent whose checks fail (the judge scores 3) given 40 thumbs up by one client:
    its XP, level and Sentinel rate are what its checks alone made them, every answer is
    still checked, and its fitted skill stays within the 95% interval it had without the
    feedback."""

    async def body(client: openai.AsyncOpenAI, services: Services, _judging: Judging) -> None:
        contracts = []
        for _ in range(40):
            headers = await ask(client)
            assert headers["x-agentladder-check"] == "yes"  # a rookie: every answer checked
            contracts.append(headers["x-agentladder-contract"])
        checks = services.gateway.checks
        assert checks is not None
        assert checks.queue is not None
        for _ in range(500):
            if not checks.queue.outstanding:
                break
            await asyncio.sleep(0.02)
        assert not checks.queue.outstanding
        await services.skill.fit(force=True)
        alone = await services.skill.of_agent("alpha")
        profile = await services.oracle.get_profile("alpha")
        rate = await services.oracle.get_effective_rate("alpha", "audit")
        for contract in contracts:
            answer = await give(services, TEAM_A, {"contract_id": contract, "thumbs": "up"})
            assert answer.status_code == 200, answer.text
            assert answer.json()["xp_awarded"] == 0
        after = await services.oracle.get_profile("alpha")
        assert (after.xp, after.level) == (profile.xp, profile.level)
        assert await services.oracle.get_effective_rate("alpha", "audit") == rate
        assert (await ask(client))["x-agentladder-check"] == "yes"
        await services.skill.fit(force=True)
        moved = await services.skill.of_agent("alpha")
        before = {e.task_type: e for e in alone.task_types}["audit"]
        now = {e.task_type: e for e in moved.task_types}["audit"]
        assert before.low <= now.skill <= before.high, (before, now)

    run(config(providers.base_url), body, Judging(score=3.0), key=TEAM_A)


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"thumbs": "sideways"}, "thumbs"),
        ({"score": 11}, "score"),
        ({"score": "7"}, "score"),
        ({"score": 7, "thumbs": "up"}, "score"),
        ({}, "score"),
        ({"score": 7, "comment": 5}, "comment"),
        ({"score": 7, "stars": 5}, "stars"),
        ({"score": 7, "contract_id": 12}, "contract_id"),
    ],
)
def test_bad_feedback_is_422_naming_the_field_and_nothing_is_stored(
    providers: Providers, given: dict[str, Any], field: str
) -> None:
    """Each bad field is refused with 422, its name in ``param`` and its value in the
    message, and nothing is stored."""

    async def body(client: openai.AsyncOpenAI, services: Services, _: Judging) -> None:
        contract = (await ask(client))["x-agentladder-contract"]
        answer = await give(services, TEAM_A, {"contract_id": contract, **given})
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["param"] == field
        assert error["message"].startswith(f"{field}: ")
        assert await services.store.get_event("alpha", judgment_key(f"{contract}:feedback")) is None
        assert await skill_event(services, f"judgment:alpha:{contract}:feedback") is None

    run(config(providers.base_url), body, Judging(), key=TEAM_A)


def test_feedback_is_404_unknown_403_anothers_and_409_changed(providers: Providers) -> None:
    """An unknown contract is 404; another client's contract 403; the same feedback again
    a duplicate (200), another score for it 409."""

    async def body(client: openai.AsyncOpenAI, services: Services, _: Judging) -> None:
        contract = (await ask(client))["x-agentladder-contract"]
        unknown = await give(services, TEAM_A, {"contract_id": "gw-" + "0" * 32, "score": 5})
        assert unknown.status_code == 404, unknown.text
        theirs = await give(services, TEAM_B, {"contract_id": contract, "score": 5})
        assert theirs.status_code == 403, theirs.text
        assert "another client's" in theirs.json()["error"]["message"]
        mine = await give(services, TEAM_A, {"contract_id": contract, "score": 5})
        assert mine.json()["duplicate"] is False
        again = await give(services, TEAM_A, {"contract_id": contract, "score": 5})
        assert again.status_code == 200
        assert again.json()["duplicate"] is True
        changed = await give(services, TEAM_A, {"contract_id": contract, "score": 9})
        assert changed.status_code == 409, changed.text
        unauthenticated = await give(services, "nobody-0123456789", {"contract_id": contract})
        assert unauthenticated.status_code == 401

    run(config(providers.base_url), body, Judging(), key=TEAM_A)
