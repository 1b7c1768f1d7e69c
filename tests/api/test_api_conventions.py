"""HTTP conventions: errors documented where they can happen, 401 with a Bearer challenge,
415 for a body that is not JSON, 202 with Location."""

from __future__ import annotations

import re
from typing import Any

import httpx
from fastapi.routing import APIRoute
from starlette.routing import Match

from agentladder.api.app import create_served_app
from agentladder.api.openapi_errors import ERRORS
from agentladder.config import parse_settings
from agentladder.services.container import Services
from tests.api.conftest import ADMIN, CONFIG, ORCH, bearer

JUDGMENT = b'{"agent_id": "sim_a", "contract_id": "c1", "score": 8.0}'
ERROR_CODES = {"400", "401", "403", "404", "409", "413", "415", "422", "429", "503"}


def errors_of(doc: dict[str, Any], path: str, method: str) -> set[str]:
    """The error statuses the document gives one operation."""
    return set(doc["paths"][path][method]["responses"]) & ERROR_CODES


def test_each_operation_documents_only_the_errors_it_can_return(api: Any) -> None:
    """Every operation is listed in ERRORS and documents exactly those statuses: no 401 or
    403 on open reads, no 404 without something to find, 415 and 413 on writes only."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        doc = (await client.get("/openapi.json")).json()
        operations = {(p, m) for p, item in doc["paths"].items() for m in item}
        assert operations == set(ERRORS)
        for (path, method), statuses in ERRORS.items():
            assert errors_of(doc, path, method) == set(statuses), (path, method)
        assert errors_of(doc, "/healthz", "get") == {"400"}
        assert errors_of(doc, "/agents", "get") == {"400", "503"}
        for path, item in doc["paths"].items():
            for method in item:
                found = errors_of(doc, path, method)
                if method == "get":
                    assert not found & {"413", "415"}, path
                else:
                    assert {"401", "403", "413", "415", "422"} <= found, path
        responses = doc["paths"]["/deliberation"]["post"]["responses"]
        assert "Location" in responses["202"]["headers"]

    api(body)


def test_a_401_carries_a_bearer_challenge(api: Any) -> None:
    """No token or an unknown one, on a write or an admin read: 401 with WWW-Authenticate
    Bearer (error="invalid_token" for a token the server does not know)."""

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        unknown = bearer("not-a-token-0123456789")
        answers = [
            await client.post("/oracle/judgments", content=JUDGMENT),
            await client.post("/oracle/judgments", content=JUDGMENT, headers=unknown),
            await client.get("/admin/api/agents/stats"),
            await client.get("/admin/api/agents/stats", headers=unknown),
        ]
        for answer in answers:
            assert answer.status_code == 401
            assert answer.headers["www-authenticate"].startswith("Bearer")
        assert 'error="invalid_token"' in answers[3].headers["www-authenticate"]

    api(body)


def test_a_body_that_is_not_json_is_415(api: Any) -> None:
    """A write whose body is sent as text, as a form or with no Content-Type: 415
    unsupported_media_type, nothing stored; the same body as JSON is taken."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        for kind in ("text/plain", "application/x-www-form-urlencoded", None):
            headers = {**bearer(ORCH), **({} if kind is None else {"content-type": kind})}
            refused = await client.post("/oracle/judgments", content=JUDGMENT, headers=headers)
            assert refused.status_code == 415, kind
            assert refused.json()["error"]["code"] == "unsupported_media_type"
            assert (kind or "none") in refused.json()["error"]["message"]
        assert await services.store.ledger("sim_a") == []  # nothing judged
        taken = await client.post(
            "/oracle/judgments", content=JUDGMENT,
            headers={**bearer(ORCH), "content-type": "application/json"},
        )  # fmt: skip
        assert taken.status_code == 200

    api(body)


def test_a_202_says_where_to_follow(api: Any) -> None:
    """POST /deliberation answers 202 with Location: the deliberation's own URL."""

    async def body(client: httpx.AsyncClient, services: Services) -> None:
        request = {"user_query": "q", "agent_names": ["sim_a", "sim_b"]}
        accepted = await client.post("/deliberation", json=request, headers=bearer(ADMIN))
        assert accepted.status_code == 202
        location = accepted.headers["location"]
        assert location == f"/deliberation/{accepted.json()['deliberation_id']}"
        await services.orchestrator.settle()
        followed = await client.get(location)
        assert followed.status_code == 200
        assert followed.json()["status"] == "completed"

    api(body)


def _sample(path: str) -> str:
    """A concrete path a route template matches (each parameter ``x1``)."""
    return re.sub(r"\{[^}]+\}", "x1", path)


def test_no_two_routes_match_one_path() -> None:
    """Each operation's path is matched by one entry of the app's routes alone (the router
    that holds it), for its methods: the order the routers are included in
    (``api/app.py``, the most requested first) changes which route a request meets first,
    never which one answers it."""
    app = create_served_app(parse_settings(CONFIG))
    checked: set[tuple[str, str]] = set()
    for entry in app.routes:
        held = getattr(entry, "original_router", None)
        for route in held.routes if held is not None else [entry]:
            if not isinstance(route, APIRoute):
                continue
            path = _sample(route.path)
            assert route.methods is not None
            for method in sorted(route.methods):
                scope = {"type": "http", "path": path, "method": method, "root_path": ""}
                full = [e for e in app.routes if e.matches(scope)[0] is Match.FULL]
                assert full == [entry], (method, path, full)
                checked.add((route.path, method.lower()))
    assert set(ERRORS) <= checked  # every operation of the API, not a few
