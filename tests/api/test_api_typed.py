"""Typed API: every response of /openapi.json has a schema with no open object, and real
answers of a served instance, errors with each of their extra fields, conform to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis.openapi.checks import JsonSchemaError

from agentladder.services.container import Services
from tests.inprocess import call_app
from tests.served import Server, start_server

FREE_FORM: frozenset[str] = frozenset()
"""Schemas (``Name.property``) allowed to be free-form objects: none (docs/api.md)."""

NO_BODY = frozenset({"204"})
"""Statuses that carry no body."""


def _open_objects(doc: dict[str, Any], root: Any, where: str) -> list[str]:
    """Every place under ``root`` (following $refs) that lets any value through: an
    object with no properties and no typed values, extra properties of any type, or a
    property with no type at all."""
    schemas = doc["components"]["schemas"]
    found: list[str] = []
    seen: set[str] = set()
    pending: list[tuple[Any, str]] = [(root, where)]
    while pending:
        node, at = pending.pop()
        if isinstance(node, list):
            pending.extend((item, f"{at}[{i}]") for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                seen.add(name)
                pending.append((schemas[name], name))
            continue
        typed = {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "properties"}
        extra = node.get("additionalProperties")
        if at not in FREE_FORM:
            if not typed & set(node):
                found.append(f"{at}: no type ({node})")
            elif extra is True or extra == {}:
                found.append(f"{at}: additionalProperties of any type")
            elif node.get("type") == "object" and "properties" not in node and extra is None:
                found.append(f"{at}: an object with no properties")
        for key, value in node.items():
            if key == "properties":
                pending.extend((schema, f"{at}.{name}") for name, schema in value.items())
            elif isinstance(value, dict | list):
                pending.append((value, at if key in ("items", "anyOf") else f"{at}/{key}"))
    return found


def _document() -> dict[str, Any]:
    """/openapi.json of the app, in-process."""
    doc: dict[str, Any] = {}

    async def body(client: httpx.AsyncClient, _: Services) -> None:
        doc.update((await client.get("/openapi.json")).json())

    call_app({"agents": []}, body)
    return doc


def test_every_response_has_a_closed_schema() -> None:
    """Each operation's every response (2xx and error) has a JSON schema, and nothing in
    it is an open object: no free dict, no object without properties, no untyped field."""
    doc = _document()
    problems: list[str] = []
    responses = 0
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                where = f"{method.upper()} {path} {status}"
                responses += 1
                if status in NO_BODY:
                    assert "content" not in response, where
                    continue
                schema = response.get("content", {}).get("application/json", {}).get("schema")
                if not schema:
                    problems.append(f"{where}: no schema")
                    continue
                problems.extend(_open_objects(doc, schema, where))
    assert responses > 100
    assert problems == []


def test_the_walk_finds_open_objects() -> None:
    """The check itself fails on a free dict, an untyped field and extra fields of any type."""
    doc = {"components": {"schemas": {"Open": {"type": "object", "additionalProperties": True}}}}
    assert _open_objects(doc, {"$ref": "#/components/schemas/Open"}, "r")
    assert _open_objects(doc, {"type": "object"}, "r")
    assert _open_objects(doc, {"type": "object", "properties": {"x": {"title": "X"}}}, "r")
    typed_map = {"type": "object", "additionalProperties": {"type": "number"}}
    assert _open_objects(doc, typed_map, "r") == []


def test_named_responses_are_the_api_models() -> None:
    """The record, the list's items, the Sentinel's decision, readiness, liveness and the
    error body are named models with their fields (what a generated client types)."""
    doc = _document()
    schemas = doc["components"]["schemas"]

    def ok(path: str, method: str, status: str = "200") -> str:
        content = doc["paths"][path][method]["responses"][status]["content"]
        ref: str = content["application/json"]["schema"]["$ref"]
        return ref.rsplit("/", 1)[-1]

    assert ok("/deliberation/{deliberation_id}", "get") == "DeliberationOut"
    assert ok("/oracle/sentinel/check", "post") == "SamplingDecision"
    assert ok("/readyz", "get") == "ReadyOut"
    assert ok("/healthz", "get") == "AliveOut"
    assert ok("/readyz", "get", "503") == "ErrorOut"
    listed = schemas["DeliberationsOut"]["properties"]["deliberations"]["items"]
    assert listed == {"$ref": "#/components/schemas/DeliberationSummary"}
    assert "rounds" not in schemas["DeliberationSummary"]["properties"]
    assert "submissions" not in schemas["DeliberationOut"]["properties"]
    assert "validate" in schemas["SamplingDecision"]["required"]
    body = schemas["ErrorBody"]
    assert body["additionalProperties"] is False
    for field in ("code", "message", "field", "value", "suggestions", "fields", "qualified",
                  "excluded"):  # fmt: skip
        assert field in body["properties"], field


ADMIN = "typed-admin-token-0123456789"
AGENT = "typed-agent-token-0123456789"
CONFIG = f"""
agents:
  - name: sim_a
    backend: {{kind: simulated, quality: 7.0}}
  - name: sim_b
    backend: {{kind: simulated, quality: 9.0}}
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: agent, token: {AGENT}, agent_id: sim_a}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One `agentladder serve` for this module's conformance checks."""
    server = start_server(tmp_path_factory.mktemp("typed"), CONFIG, db="typed.db")
    try:
        yield server
    finally:
        server.stop()


def test_real_answers_conform_to_their_schemas(served: Server) -> None:
    """Real answers, errors with every extra field they carry (field, value, suggestions,
    fields, qualified, excluded) included, validate against the served /openapi.json."""
    schema = schemathesis.openapi.from_url(served.url("/openapi.json"))
    admin = {"authorization": f"Bearer {ADMIN}"}
    with httpx.Client(base_url=served.base, headers=admin, timeout=30) as http:
        started = http.post("/deliberation", json={"user_query": "Which controls matter?",
                                                   "agent_names": ["sim_a", "sim_b"]})  # fmt: skip
        identifier = started.json()["deliberation_id"]
        served.settled(identifier)
        judged = http.post("/oracle/judgments", json={"agent_id": "sim_a", "contract_id": "t1",
                                                       "score": 8})  # fmt: skip
        answers: list[tuple[str, str, httpx.Response, int, set[str]]] = [
            ("/deliberation", "POST", started, 202, set()),
            ("/deliberation/{deliberation_id}", "GET", http.get(f"/deliberation/{identifier}"),
             200, set()),
            ("/deliberations", "GET", http.get("/deliberations"), 200, set()),
            ("/oracle/sentinel/check", "POST",
             http.post("/oracle/sentinel/check", json={"agent_id": "sim_a"}), 200, set()),
            ("/readyz", "GET", http.get("/readyz"), 200, set()),
            ("/healthz", "GET", http.get("/healthz"), 200, set()),
            ("/oracle/judgments", "POST", judged, 200, set()),
            ("/oracle/judgments", "POST",
             http.post("/oracle/judgments", json={"agent_id": "sim_a", "contract_id": "t2",
                                                  "score": 11}), 422, {"field", "value"}),
            ("/oracle/judgments", "POST",
             http.post("/oracle/judgments", json={"agent_id": "sim_aa", "contract_id": "t3",
                                                  "score": 5}), 422, {"suggestions"}),
            ("/oracle/judgments", "POST",
             http.post("/oracle/judgments", json={"agent_id": "sim_a", "contract_id": "t1",
                                                  "score": 2}), 409, set()),
            ("/agents/heartbeat", "POST",
             http.post("/agents/heartbeat", json={"name": "sim_x", "rank": 9}), 422, {"fields"}),
            ("/agents/heartbeat", "POST",
             http.post("/agents/heartbeat", json={"name": "sim_a", "provider_id": "other"}),
             409, {"fields"}),
            ("/deliberation", "POST",
             http.post("/deliberation", json={"user_query": "q", "min_agent_rank": 1,
                                              "agent_names": ["sim_a", "sim_b"]}),
             400, {"qualified", "excluded"}),
            ("/deliberation", "POST",
             http.post("/deliberation", json={"user_query": "q",
                                              "agent_names": ["sim_a", "sim_bb"]}),
             422, {"field", "value", "suggestions"}),
            ("/oracle/profiles/{agent_id}", "GET", http.get("/oracle/profiles/sim_bb"), 404,
             {"suggestions"}),
            ("/route", "POST", http.post("/route", json={"count": 3}), 400, {"excluded"}),
            ("/deliberation/{deliberation_id}", "GET", http.get("/deliberation/nope"), 404, set()),
            ("/oracle/judgments", "POST",
             http.post("/oracle/judgments", json={}, headers={"authorization": "Bearer x" * 3}),
             401, set()),
            ("/oracle/judgments", "POST",
             http.post("/oracle/judgments", json={}, headers={"authorization": f"Bearer {AGENT}"}),
             403, set()),
        ]  # fmt: skip
    for path, method, answer, status, extra in answers:
        assert answer.status_code == status, (path, answer.text)
        schema[path][method].validate_response(answer)
        if status >= 400:
            assert extra <= set(answer.json()["error"]), (path, answer.text)


def test_an_undeclared_error_field_breaks_conformance(served: Server) -> None:
    """The error schema is closed: a body with a field it does not declare fails the check
    (so the conformance above would catch an extra field nobody documented)."""
    schema = schemathesis.openapi.from_url(served.url("/openapi.json"))
    real = httpx.get(served.url("/deliberation/nope"), timeout=10)
    body = real.json()
    body["error"]["undeclared"] = 1
    forged = httpx.Response(404, json=body, request=real.request)
    forged.elapsed = real.elapsed
    schema["/deliberation/{deliberation_id}"]["GET"].validate_response(real)
    with pytest.raises(JsonSchemaError) as failed:
        schema["/deliberation/{deliberation_id}"]["GET"].validate_response(forged)
    assert "'undeclared' was unexpected" in failed.value.message
