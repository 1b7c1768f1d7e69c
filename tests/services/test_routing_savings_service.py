"""``GET /routing/savings`` in-process over the memory store: the served records of a
window with their judgments (a gateway check's, a caller's feedback) read back, each
score less its source's leniency as the fit learned it, against the reference's skill
when routed; direct and older records counted apart; the window and its bound."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from agentladder.domain.routing.spec import Strategy
from agentladder.services.container import Services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.store.served import ServedRequest
from tests.inprocess import call_app

CONFIG: dict[str, Any] = {"agents": []}
CHECK_JUDGE = "gateway-judge:local-judge"


def record(contract: str, agent: str, at: float, **fields: Any) -> ServedRequest:
    """A routed answer at ``audit`` whose reference is ``dear`` (skill 8.5, sd 0.4)."""
    routed: dict[str, Any] = {
        "routed": Strategy.CHEAPEST_ABOVE, "cost_usd": 1.0 if agent == "cheap" else 4.0,
        "input_tokens": 100, "output_tokens": 50, "reference_agent": "dear",
        "reference_cost_usd": 4.0, "reference_skill": 8.5, "reference_sd": 0.4,
        "quality_floor": 7.0,
    }  # fmt: skip
    return ServedRequest.model_validate(
        {"contract_id": contract, "agent_id": agent, "caller": "team-a", "task_type": "audit",
         "at": at, **routed, **fields}
    )  # fmt: skip


async def judge_by_check(services: Services, agent: str, contract: str, score: float) -> None:
    """What a gateway check stores: an Oracle judgment by the gateway's judge."""
    await services.oracle.submit_for_judgment(
        JudgmentRequest(agent_id=agent, contract_id=contract, task_type="audit", score=score,
                        success=score >= 5, judge=CHECK_JUDGE, new_agent=True)
    )  # fmt: skip


async def feedback(services: Services, agent: str, contract: str, score: float) -> None:
    """What ``POST /v1/feedback`` stores: deferred skill evidence by the caller."""
    evidence = judgment_evidence(
        agent, f"{contract}:feedback", "audit", score, score >= 5, time.time(),
        judge="feedback:team-a", deferred=True,
    )  # fmt: skip
    await services.skill.observe(evidence)


def test_savings_read_the_window_and_weigh_each_judgment_by_its_source() -> None:
    """Four routed answers (three by cheap, one by the reference dear), one direct, one of
    an older server, one whose stream's end was not recorded; cheap's judged by the check
    (6, 8) and by feedback (9, and 7 on the first too), dear's by the check (9). After a
    fit, each score less its source's leniency at audit: the figures the test computes by
    hand."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        now = time.time()
        old = ServedRequest(contract_id="gw-old", agent_id="cheap", caller="team-a",
                            task_type="audit", at=now - 50)  # fmt: skip
        records = [
            record("gw-1", "cheap", now - 40), record("gw-2", "cheap", now - 30),
            record("gw-3", "cheap", now - 20), record("gw-4", "dear", now - 10),
            record("gw-direct", "cheap", now - 5, routed=None, reference_agent=None),
            old, record("gw-cut", "cheap", now - 3, cost_usd=None),  # a stream not ended
            record("gw-stale", "cheap", now - 8 * 86_400),
        ]  # fmt: skip
        await services.store.put_served(records, 30 * 86_400)
        await judge_by_check(services, "cheap", "gw-1", 6.0)
        await judge_by_check(services, "cheap", "gw-2", 8.0)
        await judge_by_check(services, "dear", "gw-4", 9.0)
        await feedback(services, "cheap", "gw-3", 9.0)
        await feedback(services, "cheap", "gw-1", 7.0)
        for n in range(30):  # a second judge at audit, so that the leniencies are learned
            await services.oracle.submit_for_judgment(
                JudgmentRequest(agent_id="cheap" if n % 2 else "dear", contract_id=f"s-{n}",
                                task_type="audit", score=6.5 if n % 2 else 8.0, judge="other")
            )  # fmt: skip
        await services.skill.fit()
        fleet = await services.store.get_fleet_skill()
        check = fleet.sources[f"judge:{CHECK_JUDGE}"].at_type("audit")[0]
        given = fleet.sources["judge:feedback:team-a"].at_type("audit")[0]
        assert abs(check) + abs(given) > 0.01  # the fit learned something to take off

        found = (await client.get("/routing/savings", params={"window_s": 86_400})).json()
        assert (found["read"], found["routed"], found["direct"], found["uncosted"]) == (7, 4, 2, 1)
        assert found["truncated"] is False
        assert found["oldest_at"] == pytest.approx(now - 50)
        [audit] = found["task_types"]
        assert audit == {**found["overall"], "task_type": "audit",
                         "cost": audit["cost"], "quality": audit["quality"]}  # fmt: skip
        assert (audit["requests"], audit["by_reference"]) == (4, 1)
        cost = audit["cost"]
        assert (cost["routed_usd"], cost["reference_usd"]) == (7.0, 16.0)
        assert cost["ratio"] == pytest.approx(7 / 16)
        quality = audit["quality"]
        assert quality["judged"] == 4
        assert quality["mean_score"] == pytest.approx(((6 + 7) / 2 + 8 + 9 + 9) / 4)
        routed = [((6 - check) + (7 - given)) / 2, 8 - check, 9 - given, 9 - check]
        reference = [8.5, 8.5, 8.5, 9 - check]  # dear's own answer: its own score
        assert quality["routed"] == pytest.approx(sum(routed) / 4)
        assert quality["reference"] == pytest.approx(sum(reference) / 4)
        assert quality["ratio"] == pytest.approx(sum(routed) / sum(reference))
        assert quality["low"] <= quality["ratio"] <= quality["high"]
        again = (await client.get("/routing/savings", params={"window_s": 86_400})).json()
        assert again == {**found, "until": again["until"], "since": again["since"]}

        bounded = (await client.get("/routing/savings", params={"limit": 2})).json()
        assert (bounded["read"], bounded["truncated"], bounded["routed"]) == (2, True, 0)
        assert bounded["oldest_at"] == pytest.approx(now - 5)
        week = (await client.get("/routing/savings")).json()  # 7 days: gw-stale left out
        assert week["read"] == 7
        month = (await client.get("/routing/savings", params={"window_s": 9 * 86_400})).json()
        assert (month["read"], month["routed"]) == (8, 5)
        empty = (await client.get("/routing/savings", params={"window_s": 1})).json()
        assert (empty["overall"], empty["task_types"], empty["read"]) == (None, [], 0)

    call_app(CONFIG, body)


def test_bad_queries_are_refused_naming_the_field() -> None:
    """A window of 0, a limit past the bound and too few resamples: 422 naming each."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        for query, field in (({"window_s": 0}, "window_s"), ({"limit": 50_001}, "limit"),
                             ({"resamples": 10}, "resamples"), ({"seed": -1}, "seed")):  # fmt: skip
            answer = await client.get("/routing/savings", params=query)
            assert answer.status_code == 422, query
            assert field in answer.json()["error"]["field"], answer.json()

    call_app(CONFIG, body)
