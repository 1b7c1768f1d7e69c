"""A judgment's `judge`, `observed_at` and `scale` (docs/api.md): the judge and time of its
skill evidence, its score's scale; refused naming the field and the value, nothing
stored; a judgment naming none of them is stored and fingerprinted as before they
existed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from agentladder.services.container import Services
from agentladder.services.oracle.models import JudgmentRequest, fingerprint
from tests.api.conftest import ORCH, bearer

BASE = {"agent_id": "a1", "contract_id": "c1", "task_type": "math", "new_agent": True}


def test_a_judgment_without_the_new_fields_keeps_its_fingerprint() -> None:
    """The fingerprint the version before judge, observed_at and scale gave this request
    (computed there): a client re-sending it is answered duplicate, not conflict."""
    request = JudgmentRequest(agent_id="a1", contract_id="c1", score=7.5, task_type="math",
                              cost=0.01)  # fmt: skip
    assert fingerprint(request) == (
        "ec83f34daca18db78299abfa56a71728869156e6c1ee3ef315f0af979217d5f7"
    )


def test_judge_observed_at_and_scale_reach_the_evidence(api: Any) -> None:
    """A 1-10 score of 1 is 0; 80 on 0-100 is 8; the evidence is by the named judge at the
    named time (else 'oracle', now)."""
    when = datetime(2026, 5, 1, 8, 30, tzinfo=UTC)

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        sent = [
            {**BASE, "score": 1, "scale": "1-10", "judge": "openai/gpt-4o",
             "observed_at": when.isoformat()},
            {**BASE, "contract_id": "c2", "score": 80, "scale": "0-100"},
        ]  # fmt: skip
        for judgment in sent:
            response = await client.post("/oracle/judgments", json=judgment, headers=bearer(ORCH))
            assert response.status_code == 200, response.text
        again = await client.post("/oracle/judgments", json=sent[0], headers=bearer(ORCH))
        assert again.json()["duplicate"] is True
        first = await services.store.get_skill_event("judgment:a1:c1")
        second = await services.store.get_skill_event("judgment:a1:c2")
        assert first is not None
        assert second is not None
        assert (first.at, '"judge":"openai/gpt-4o"' in first.payload) == (when.timestamp(), True)
        assert '"judge":"oracle"' in second.payload
        assert second.at > when.timestamp()
        ledger = (await client.get("/oracle/profiles/a1")).json()
        assert ledger["stats"]["total_tasks"] == 2

    api(body)


def test_bad_values_are_422_naming_the_field_and_nothing_is_stored(api: Any) -> None:
    """A score outside its scale, an unknown scale, a judge name with a space, a time
    without its zone or an hour ahead: 422 naming the field; nothing stored."""
    ahead = (datetime.now(UTC) + timedelta(hours=1)).isoformat()

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for field, change in (
            ("score", {"score": 120, "scale": "0-100"}),
            ("scale", {"score": 5, "scale": "1-5"}),
            ("scale", {"score": 5, "scale": {}}),  # was a 500 (unhashable), found by schemathesis
            ("judge", {"score": 5, "judge": "a judge"}),
            ("observed_at", {"score": 5, "observed_at": "2026-01-01T00:00:00"}),
            ("observed_at", {"score": 5, "observed_at": ahead}),
        ):
            response = await client.post(
                "/oracle/judgments", json={**BASE, **change}, headers=bearer(ORCH)
            )
            assert response.status_code == 422, (field, response.text)
            error = response.json()["error"]
            assert error["field"] == field, error
            assert error["message"].startswith(f"{field}: "), error
        assert (await client.get("/oracle/leaderboard")).json()["entries"] == []
        assert await services.store.get_skill_event("judgment:a1:c1") is None

    api(body)


def test_a_reported_deliberation_is_evidence_at_its_observed_at(api: Any) -> None:
    """`observed_at` on POST /deliberations/results is its evidence's time; one an hour
    ahead is 422 naming it, nothing stored."""
    when = datetime(2026, 6, 1, tzinfo=UTC)
    rounds = [{"agents": {"x": {"aggregated_score": 6.0}, "y": {"aggregated_score": 9.0}}}]

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        ahead = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
        late = {"deliberation_id": "ext-0", "rounds": rounds, "observed_at": ahead}
        refused = await client.post("/deliberations/results", json=late, headers=bearer(ORCH))
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["field"] == "observed_at"
        assert await services.store.get_deliberation("ext-0") is None
        report = {"deliberation_id": "ext-1", "rounds": rounds, "observed_at": when.isoformat()}
        first = await client.post("/deliberations/results", json=report, headers=bearer(ORCH))
        assert first.status_code == 200, first.text
        await services.orchestrator.settle()
        event = await services.store.get_skill_event("deliberation:ext-1")
        assert event is not None
        assert event.at == when.timestamp()

    api(body)
