"""The skill endpoints: the board in tiers, one agent's skills, the skill beside the stats,
and reported peer scores refused with the field named."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from agentladder.services.container import Services
from tests.api.conftest import ORCH, bearer


def report(deliberation_id: str, evaluations: dict[str, dict[str, float]]) -> dict[str, Any]:
    return {
        "deliberation_id": deliberation_id,
        "task_type": "code_review",
        "rounds": [{"agents": {
            author: {"aggregated_score": min(10.0, sum(s.values()) / len(s)), "evaluations": s}
            for author, s in evaluations.items()
        }}],
    }  # fmt: skip


SCORES = {
    "sim_a": {"sim_b": 7.0, "sim_c": 7.5},
    "sim_b": {"sim_a": 8.5, "sim_c": 8.0},
    "sim_c": {"sim_a": 5.5, "sim_b": 6.0},
}


def test_the_board_the_agent_and_its_skill_beside_the_stats(api: Any) -> None:
    """After reported deliberations: GET /skills lists the three by skill with intervals and
    tiers; GET /agents/{id}/skills has the task type; GET /agents/{id} has ``skill``."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for index in range(6):
            sent = await client.post(
                "/deliberations/results", json=report(f"r{index}", SCORES), headers=bearer(ORCH)
            )
            assert sent.status_code in (200, 201, 202), sent.text
        await services.orchestrator.settle()
        board = (await client.get("/skills", params={"task_type": "code_review"})).json()
        assert board["task_type"] == "code_review"
        order = [e["agent_id"] for e in board["entries"]]
        assert order == ["sim_b", "sim_a", "sim_c"]
        top = board["entries"][0]
        assert top["low"] <= top["skill"] <= top["high"]
        assert top["observations"] == 12
        assert top["tier"] == 1
        assert {"sd", "provisional"} <= set(top)
        overall = (await client.get("/skills")).json()
        assert overall["task_type"] is None
        assert len(overall["entries"]) == 3
        mine = (await client.get("/agents/sim_b/skills")).json()
        assert [e["task_type"] for e in mine["task_types"]] == ["code_review"]
        assert mine["overall"]["task_type"] is None
        agent = (await client.get("/agents/sim_b")).json()
        assert agent["skill"]["agent_id"] == "sim_b"
        assert len(agent["stats"]) == 10  # the specification's ten fields, unchanged
        missing = await client.get("/agents/nobody/skills")
        assert missing.status_code == 404
        bad_limit = await client.get("/skills", params={"limit": 0})
        assert bad_limit.status_code == 422

    api(body)


def test_reported_scores_are_refused_with_the_field_named(api: Any) -> None:
    """A score of 11, an evaluator not in the deliberation, an agent scoring itself: 422
    naming the field; nothing stored."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        cases = [
            ({"sim_a": {"sim_b": 11.0}, "sim_b": {"sim_a": 5.0}}, "evaluations", "11"),
            ({"sim_a": {"stranger": 5.0}, "sim_b": {"sim_a": 5.0}}, "stranger", "not in"),
            ({"sim_a": {"sim_a": 5.0}, "sim_b": {"sim_a": 5.0}}, "sim_a", "itself"),
        ]
        for index, (scores, field, words) in enumerate(cases):
            sent = await client.post(
                "/deliberations/results", json=report(f"bad{index}", scores), headers=bearer(ORCH)
            )
            assert sent.status_code == 422, sent.text
            message = sent.text
            assert field in message, message
            assert words in message, message
        assert await services.store.skill_events() == []
        assert await services.store.get_deliberation("bad0") is None

    api(body)


def test_the_board_says_whose_scale_each_task_type_is_on(api: Any) -> None:
    """Judgments of one judge, fitted: GET /skills names that judge as the whole scale of
    the task type (its leniency cannot be told from the agents' skill)."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for index, (agent, score) in enumerate([("sim_a", 8.0), ("sim_b", 5.0)] * 3):
            judgment = {"agent_id": agent, "contract_id": f"c{index}", "task_type": "qa",
                        "score": score}  # fmt: skip
            sent = await client.post("/oracle/judgments", json=judgment, headers=bearer(ORCH))
            assert sent.status_code == 200, sent.text
        await services.skill.fit()
        board = (await client.get("/skills", params={"task_type": "qa"})).json()
        assert board["scale"] == [
            {"task_type": "qa", "sources": [{"source": "judge:oracle", "share": 1.0}]}
        ]
        assert [e["agent_id"] for e in board["entries"]] == ["sim_a", "sim_b"]

    api(body)


def _batch(items: list[tuple[str, str, float]]) -> dict[str, Any]:
    return {"judgments": [
        {"agent_id": agent, "contract_id": f"c{i}", "task_type": task_type, "score": score,
         "new_agent": True, "judge": "gpt-4"}
        for i, (agent, task_type, score) in enumerate(items)
    ]}  # fmt: skip


def test_overall_reads_the_same_everywhere_and_is_the_mean_of_the_task_types_shown(
    api: Any,
) -> None:
    """A near-perfect agent (scores 9.6 to 10 at two of three task types), a middling one
    at all three, after a fit: GET /agents/{id}/skills, GET /agents/{id}, GET /skills and
    POST /route (no task type) read one overall (within 1e-6: each reads it as of its own
    moment, and the estimates widen with time), the mean of ``task_types`` and
    ``predicted`` skills within 1e-9."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        items = [("sim_a", t, s) for t in ("qa", "math") for s in (10.0, 9.8, 10.0, 9.6) * 3]
        items += [("sim_b", t, s) for t in ("qa", "math", "code") for s in (5.0, 6.5, 6.0) * 4]
        sent = await client.post("/oracle/judgments/batch", json=_batch(items),
                                 headers=bearer(ORCH))  # fmt: skip
        assert sent.status_code == 200, sent.text
        await services.skill.fit()
        board = {e["agent_id"]: e for e in (await client.get("/skills")).json()["entries"]}
        for agent in ("sim_a", "sim_b"):
            mine = (await client.get(f"/agents/{agent}/skills")).json()
            shown = [e["skill"] for e in mine["task_types"] + mine["predicted"]]
            assert sorted(e["task_type"] for e in mine["task_types"] + mine["predicted"]) == [
                "code", "math", "qa"]  # fmt: skip
            assert abs(mine["overall"]["skill"] - sum(shown) / len(shown)) <= 1e-9
            profile = (await client.get(f"/agents/{agent}")).json()
            for other in (profile["skill"], board[agent]):
                for field in ("skill", "sd", "low", "high"):
                    assert other[field] == pytest.approx(mine["overall"][field], abs=1e-6)
        routed = await client.post("/route", json={"count": 2, "strategy": "best"},
                                   headers=bearer(ORCH))  # fmt: skip
        assert routed.status_code == 200, routed.text
        for chosen in routed.json()["agents"]:
            mine = (await client.get(f"/agents/{chosen['agent_id']}/skills")).json()
            for field in ("skill", "sd", "low"):
                assert chosen[field] == pytest.approx(mine["overall"][field], abs=1e-6)
        top = (await client.get("/agents/sim_a/skills")).json()
        assert [e["task_type"] for e in top["predicted"]] == ["code"]
        assert top["predicted"][0]["observations"] == 0
        assert top["overall"]["high"] <= 10.0

    api(body)


def test_the_board_puts_provisional_agents_after_the_settled_with_no_tier(api: Any) -> None:
    """Two settled agents and one judged once by a noisy judge (provisional) though it
    scored 9.9: GET /skills lists the settled ones in tiers, then the provisional one with
    tier null."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        items = [("sim_a", "qa", s) for s in (9.0, 5.0, 10.0, 6.0, 8.0, 7.0) * 4]
        items += [("sim_b", "qa", s) for s in (1.0, 5.0, 3.0, 0.0, 4.0, 6.0) * 4]
        items += [("sim_c", "qa", 9.9)]
        sent = await client.post("/oracle/judgments/batch", json=_batch(items),
                                 headers=bearer(ORCH))  # fmt: skip
        assert sent.status_code == 200, sent.text
        await services.skill.fit()
        for params in ({}, {"task_type": "qa"}):
            entries = (await client.get("/skills", params=params)).json()["entries"]
            assert [(e["agent_id"], e["tier"], e["provisional"]) for e in entries] == [
                ("sim_a", 1, False), ("sim_b", 2, False), ("sim_c", None, True)]  # fmt: skip

    api(body)
