"""Did you mean, over HTTP: a deliberation naming an agent nobody knows, a profile, an
agent, its skills and its dashboard page not found, and routing at a task type without
evidence each offer the closest known names (``domain/suggestions.py``)."""

from __future__ import annotations

from typing import Any

import httpx

from agentladder.services.container import Services
from tests.api.conftest import ADMIN, ORCH, bearer


def test_a_deliberation_naming_an_agent_nobody_knows_is_422_with_the_closest(api: Any) -> None:
    """``sima`` for ``sim_a``: 422 invalid_input on agent_names, the value, the suggestion
    in the message and in ``suggestions``; nothing is stored. A name with no close match
    is refused the same way, without suggestions."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        sent = {"user_query": "q", "agent_names": ["sim_b", "sim_c", "sima"]}
        refused = await client.post("/deliberation", json=sent, headers=bearer(ORCH))
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert (error["code"], error["field"], error["value"]) == (
            "invalid_input", "agent_names", "sima",
        )  # fmt: skip
        assert error["suggestions"] == ["sim_a"]
        assert error["message"] == (
            "agent_names: names an agent nobody knows (configured, registered or judged"
            " before); did you mean sim_a? ('sima')"
        )
        far = {"user_query": "q", "agent_names": ["sim_b", "zzz_unheard"]}
        refused = await client.post("/deliberation", json=far, headers=bearer(ORCH))
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["suggestions"] == []
        assert (await client.get("/deliberations")).json()["deliberations"] == []

    api(body)


def test_a_named_agent_known_by_its_profile_only_is_excluded_not_refused(api: Any) -> None:
    """An agent judged before but never heartbeated is known: the deliberation runs
    without it, its exclusion's reason ``unknown`` (it is not registered), as before."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        new = {"agent_id": "imported1", "contract_id": "c-1", "score": 8, "new_agent": True}
        done = await client.post("/oracle/judgments", json=new, headers=bearer(ORCH))
        assert done.status_code == 200, done.text
        sent = {"user_query": "q", "agent_names": ["sim_a", "sim_b", "imported1"]}
        accepted = await client.post("/deliberation", json=sent, headers=bearer(ORCH))
        assert accepted.status_code == 202, accepted.text

    api(body)


def test_not_found_offers_the_closest_agent_ids(api: Any) -> None:
    """GET /oracle/profiles/ehco-like typos, /agents/{id}, /agents/{id}/skills and the
    dashboard's agent page: 404 not_found, ``did you mean sim_a?`` in the message and the
    id in ``suggestions``; an id nothing is close to: 404 without ``suggestions``."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for path in ("/oracle/profiles/sima", "/agents/sima", "/agents/sima/skills",
                     "/dashboard/agents/sima"):  # fmt: skip
            found = await client.get(path, headers=bearer(ADMIN))
            assert found.status_code == 404, (path, found.text)
            error = found.json()["error"]
            assert error["code"] == "not_found"
            assert error["message"].endswith("'sima' not found; did you mean sim_a?"), error
            assert error["suggestions"] == ["sim_a"]
        far = await client.get("/oracle/profiles/zzz_unheard", headers=bearer(ADMIN))
        assert far.status_code == 404
        assert far.json()["error"] == {
            "code": "not_found", "message": "profile 'zzz_unheard' not found",
        }  # fmt: skip
        known = await client.get("/agents/sim_a/skills", headers=bearer(ADMIN))
        assert known.status_code == 404  # known, without evidence: nothing to suggest
        assert "suggestions" not in known.json()["error"]

    api(body)


def test_routing_at_a_task_type_without_evidence_warns_and_still_routes(api: Any) -> None:
    """POST /route at ``aduit`` when agents were judged at ``audit``: 200, the agents
    chosen on predicted skill, and ``warnings`` saying no agent has evidence there, with
    ``did you mean audit?``; at ``audit`` itself, no warning."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for agent, score in (("sim_a", 8), ("sim_b", 6)):
            judged = {"agent_id": agent, "contract_id": f"c-{agent}", "score": score,
                      "task_type": "audit"}  # fmt: skip
            done = await client.post("/oracle/judgments", json=judged, headers=bearer(ORCH))
            assert done.status_code == 200, done.text
        asked = {"count": 1, "task_type": "aduit"}
        typo = await client.post("/route", json=asked, headers=bearer(ORCH))
        assert typo.status_code == 200, typo.text
        out = typo.json()
        assert len(out["agents"]) == 1
        assert out["warnings"] == [
            "no agent has evidence at task type 'aduit': routed on predicted skill (the"
            " fleet's level and the agents' other task types); did you mean audit?"
        ]
        asked = {"count": 1, "task_type": "audit"}
        right = await client.post("/route", json=asked, headers=bearer(ORCH))
        assert right.json()["warnings"] == []

    api(body)


def test_the_openapi_document_names_the_new_fields(api: Any) -> None:
    """``warnings`` of POST /route's answer and ``suggestions`` of the error body are
    documented."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        document = (await client.get("/openapi.json")).json()
        schemas = document["components"]["schemas"]
        assert "warnings" in schemas["RouteOut"]["properties"]
        described = schemas["ErrorBody"]["properties"]["suggestions"]["description"]
        assert "not_found" in described
        assert "agent_names" in described

    api(body)
