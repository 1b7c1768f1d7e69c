"""Hostile input, in-process over SQLite: every write endpoint x every kind of bad request.

For each case of ``tests/api/hostile_corpus.py``: the expected 4xx, the one error shape,
a 422 naming the field, an error body of at most 4 KiB, and nothing stored (everything
the store holds is read before and after each request and compared).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from agentladder.services.container import Services
from tests.api.conftest import ADMIN, ORCH, bearer, call_api
from tests.api.test_hostile_corpus import (
    ADMIN_WRITES,
    BODILESS_WRITES,
    ENDPOINTS,
    Endpoint,
    bodiless_cases,
    check_response,
    corpus,
    snapshot,
)

SEED_JUDGMENT = {"agent_id": "sim_a", "contract_id": "seed-1", "score": 9.0}
SEED_REPORT = {
    "deliberation_id": "seed-1",
    "rounds": [{"agents": {"sim_a": {"aggregated_score": 9.0}, "sim_b": {"aggregated_score": 6}}}],
}


async def seed(client: httpx.AsyncClient, services: Services) -> None:
    """A judgment and a reported deliberation, so that conflicts and validations have a
    target and the store is not empty."""
    judged = await client.post("/oracle/judgments", json=SEED_JUDGMENT, headers=bearer(ORCH))
    assert judged.status_code == 200, judged.text
    reported = await client.post("/deliberations/results", json=SEED_REPORT, headers=bearer(ORCH))
    assert reported.status_code == 200, reported.text
    await services.orchestrator.settle()


def _token(endpoint: Endpoint) -> str:
    return ADMIN if endpoint.path in ADMIN_WRITES else ORCH


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.path for e in ENDPOINTS])
def test_every_bad_request_is_a_4xx_in_the_one_shape_and_stores_nothing(
    endpoint: Endpoint, tmp_path: Path
) -> None:
    """The whole corpus of one endpoint against one API over SQLite, case by case."""
    cases = corpus(endpoint)
    problems: list[str] = []

    async def run(client: httpx.AsyncClient, services: Services) -> None:
        await seed(client, services)
        for case in cases:
            before = await snapshot(services)
            response = await client.post(
                case.path,
                content=case.body,
                headers={**bearer(_token(endpoint)), "content-type": case.content_type},
            )
            await services.orchestrator.settle()
            try:
                body = response.json()
            except ValueError:
                body = response.text
            found = check_response(case, response.status_code, body, len(response.content))
            if await snapshot(services) != before:
                found.append("the store changed")
            problems.extend(f"{case.label}: {p}" for p in found)

    call_api(run, store=f"sqlite:///{tmp_path / 'hostile.db'}")
    assert problems == [], "\n".join(problems[:40])
    assert len(cases) >= 60


@pytest.mark.parametrize("path", sorted(BODILESS_WRITES))
def test_a_write_that_takes_no_body_refuses_one(path: str) -> None:
    """Each body but none or ``{}`` is a 4xx in the one shape, nothing fitted; an empty
    body and ``{}`` are taken."""
    problems: list[str] = []

    async def run(client: httpx.AsyncClient, services: Services) -> None:
        await seed(client, services)
        for case in bodiless_cases(path):
            response = await client.post(
                case.path, content=case.body,
                headers={**bearer(ADMIN), "content-type": case.content_type},
            )  # fmt: skip
            found = check_response(case, response.status_code, response.json(),
                                   len(response.content))  # fmt: skip
            if (await services.store.get_fleet_skill()).fit is not None:
                found.append("a fit ran")
            problems.extend(f"{case.label}: {p}" for p in found)
        for body in (b"", b"{}", b" { } "):
            taken = await client.post(
                path, content=body, headers={**bearer(ADMIN), "content-type": "application/json"}
            )
            assert taken.status_code == 200, (body, taken.text)

    call_api(run)
    assert problems == [], "\n".join(problems)


def test_names_with_a_dot_inside_are_names() -> None:
    """'.' inside a name is allowed (a NATS key and subject token separator, never at the
    ends nor doubled), so the corpus refuses '.a', 'a.', 'a..b' but not 'a.b'."""

    async def run(client: httpx.AsyncClient, services: Services) -> None:
        response = await client.post(
            "/agents/heartbeat", json={"name": "team.a-1_x"}, headers=bearer(ADMIN)
        )
        assert response.status_code == 200, response.text
        assert (await client.get("/agents/team.a-1_x")).json()["name"] == "team.a-1_x"

    call_api(run)


def test_numbers_up_to_2_53_are_accepted() -> None:
    """The bound on numbers is 2**53: a judgment at the bound is stored, one past it is not."""

    async def run(client: httpx.AsyncClient, services: Services) -> None:
        judgment = {"agent_id": "sim_a", "contract_id": "big", "retries": 2**53}
        at = await client.post("/oracle/judgments", json=judgment, headers=bearer(ORCH))
        assert at.status_code == 200, at.text
        over = {**judgment, "contract_id": "bigger", "retries": 2**53 + 1}
        past = await client.post("/oracle/judgments", json=over, headers=bearer(ORCH))
        assert past.status_code == 422
        assert past.json()["error"]["field"] == "retries"
        assert [e.key for e in await services.store.events("sim_a")] == ["judgment:big"]

    call_api(run)
