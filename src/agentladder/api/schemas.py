"""Response bodies of the API: typed models, so responses are validated and encoded fast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentladder.api.openapi_errors import ERROR_STATUSES, ERRORS
from agentladder.domain.agents import AgentConfig
from agentladder.domain.deliberation import Excluded
from agentladder.domain.levels import Level
from agentladder.domain.registry import AgentStatus
from agentladder.domain.routing.health import AgentHealth, HealthStatus
from agentladder.domain.routing.spec import NotChosen
from agentladder.domain.stats import (
    AgentPerformanceStats,
    latency_max,
    latency_p50,
    latency_p90,
    task_success_ratio,
)
from agentladder.services.agents.registry import AgentView

__all__ = [
    "LINKS",
    "Accepted",
    "AgentOut",
    "AgentStatsOut",
    "ErrorOut",
    "ValidationRateOut",
    "agent_out",
    "document",
    "health_json",
    "stats_out",
    "with_health",
]


class AgentOut(BaseModel):
    """A registered agent: its declared fields, cost per round, status and stats."""

    model_config = ConfigDict(extra="forbid")

    name: str
    provider_id: str
    model_name: str
    description: str
    capability_tags: tuple[str, ...]
    signing_schemes: tuple[str, ...]
    input_price_per_mtok: float
    output_price_per_mtok: float
    estimated_cost_per_round: float
    status: AgentStatus = Field(description="online or offline: its heartbeat")
    first_seen: float
    last_seen: float
    remote: bool
    stats: AgentPerformanceStats
    health: AgentHealth = Field(
        description="ok, degraded or down, from the calls this instance made to its provider"
        " (not its heartbeat: docs/routing.md, Health)"
    )


class AgentStatsOut(AgentPerformanceStats):
    """An agent's stats with what derives from them (the admin view)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    task_success_ratio: float | None
    latency_p50_ms: float | None
    latency_p90_ms: float | None
    latency_max_ms: float | None


class ValidationRateOut(BaseModel):
    """How often the Sentinels check an agent's work: the level's rate (the
    specification's) and the effective rate they use now, with its reason."""

    agent_id: str
    task_type: str | None
    level: Level
    validation_rate: float
    effective_rate: float
    reason: str = Field(description="level, audit, probation, model_change or evidence")
    clearance_left: int | None = Field(
        default=None, description="passed validations still needed, while on probation"
    )
    judged: int | None = Field(
        default=None, description="tasks judged in this stream, history included"
    )
    failure_share: float | None = Field(
        default=None,
        description="the share of them that failed: under the adaptive policy the rate is at"
        " least what it needs to keep sentinel.aoql (reason evidence)",
    )


class Accepted(BaseModel):
    """A deliberation accepted for running."""

    deliberation_id: str
    status: str
    duplicate: bool = Field(default=False)


_NO_STATS = AgentPerformanceStats()
NO_CALLS = AgentHealth(status=HealthStatus.OK, reason="no call yet", since=None)
"""The health of an agent this instance never called."""


def agent_out(
    view: AgentView, stats: AgentPerformanceStats | None, health: AgentHealth | None = None
) -> AgentOut:
    """The API's view of one agent (``health``: none known, ``NO_CALLS``)."""
    config = view.registration.config
    # every part was validated when stored or computed: built, not validated again
    return AgentOut.model_construct(
        name=config.name,
        provider_id=config.provider_id,
        model_name=config.model_name,
        description=config.description,
        capability_tags=config.capability_tags,
        signing_schemes=config.signing_schemes,
        input_price_per_mtok=config.input_price_per_mtok,
        output_price_per_mtok=config.output_price_per_mtok,
        estimated_cost_per_round=config.estimated_cost_per_round,
        status=view.status,
        first_seen=view.registration.first_seen,
        last_seen=view.registration.last_seen,
        remote=view.registration.remote,
        stats=stats or _NO_STATS,
        health=health or NO_CALLS,
    )


_STATS = b'"stats":{'
_NAME = b'{"name":"'
_NO_CALLS_JSON = NO_CALLS.model_dump_json().encode()


def health_json(health: Callable[[str], AgentHealth | None], agent_id: str) -> bytes:
    """The JSON of an agent's health (``health`` answers None for one never called)."""
    found = health(agent_id)
    return _NO_CALLS_JSON if found is None else found.model_dump_json().encode()


def with_health(body: bytes, health: Callable[[str], AgentHealth | None]) -> bytes:
    """A listing of agents' objects as the store encodes them (``store/listing.py``:
    ``{"name":"...`` up to ``"stats":{...}}``), each given its ``"health"`` last, as
    ``AgentOut`` encodes it. No JSON string holds ``"stats":{`` or ``{"name":"``
    unescaped (a quote in a string is ``\\"``) and the stats hold no braces, so the body
    is cut at each ``"stats":{``: the stats end at the first ``}`` after it, and the next
    agent's name follows the first ``{"name":"`` after that. One pass over the bytes:
    a regular expression with a lazy match per agent took 6 ms for 1,000 agents, three
    times the store's read."""
    pieces = body.split(_STATS)
    out = [pieces[0]]
    head = pieces[0]
    for piece in pieces[1:]:
        start = head.find(_NAME) + len(_NAME)
        agent = head[start : head.index(b'"', start)].decode()
        end = piece.index(b"}") + 1
        out += (_STATS, piece[:end], b',"health":', health_json(health, agent))
        head = piece[end:]
        out.append(head)
    return b"".join(out)


def stats_out(agent_id: str, stats: AgentPerformanceStats) -> AgentStatsOut:
    """Stats plus success ratio and latency percentiles."""
    return AgentStatsOut(
        **stats.model_dump(),
        agent_id=agent_id,
        task_success_ratio=task_success_ratio(stats),
        latency_p50_ms=latency_p50(stats),
        latency_p90_ms=latency_p90(stats),
        latency_max_ms=latency_max(stats),
    )


class ErrorBody(BaseModel):
    """The inside of the one error shape: a code, a message, and per code more fields
    (``api/errors.py`` adds them; each is absent where its code does not carry it)."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="invalid_input, not_found, conflict, too_few_agents, ...")
    message: str = Field(description="one line for a person")
    field: str | None = Field(
        default=None, description="invalid_input: the refused field's path (judgments.3.score)"
    )
    value: str | int | float | bool | None = Field(
        default=None,
        description="invalid_input: the refused value, a JSON scalar (a list or object as its"
        " repr, cut to 200 characters; NaN and infinities as strings); null when absent",
    )
    suggestions: list[str] | None = Field(
        default=None,
        description="the closest known names to one nobody knows (did you mean?):"
        " invalid_input for an agent id (a judgment's agent_id, a deliberation's"
        " agent_names), not_found for an agent or profile; absent when none is close",
    )
    fields: list[str] | None = Field(
        default=None,
        description="server_owned_field: the fields a heartbeat may not set;"
        " declaration_mismatch: those contradicting the configuration",
    )
    qualified: list[str] | None = Field(
        default=None, description="too_few_agents: the agents that qualify"
    )
    excluded: list[Excluded | NotChosen] | None = Field(
        default=None,
        description="too_few_agents: each agent left out with its reason (a deliberation's"
        " named agents: with their rank; routing's: with a detail)",
    )


class ErrorOut(BaseModel):
    """``{"error": {"code", "message", ...}}``: every error the API returns."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorBody


_NEXT = 'the next page, rel="next" (as page.next); absent on the last page'
HEADERS: dict[tuple[str, str, str], tuple[str, str]] = {
    ("/deliberation", "post", "202"): ("Location", "where to follow it: /deliberation/{id}"),
    ("/deliberations", "get", "200"): ("Link", _NEXT),
    ("/oracle/profiles/{agent_id}/history", "get", "200"): ("Link", _NEXT),
    ("/oracle/leaderboard", "get", "200"): ("Link", _NEXT),
    ("/agents/directory", "get", "200"): ("Link", _NEXT),
}
"""Response headers the OpenAPI document names."""

LINKS: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {
    ("/agents/heartbeat", "post", "200"): {
        "GetAgent": {"to": ("/agents/{agent_id}", "get"),
                     "parameters": {"agent_id": "$response.body#/name"}},
        "GetPrivileges": {"to": ("/oracle/agents/{agent_id}/privileges", "get"),
                          "parameters": {"agent_id": "$response.body#/name"}},
    },
    ("/deliberation", "post", "202"): {
        "GetDeliberation": {"to": ("/deliberation/{deliberation_id}", "get"),
                            "parameters": {"deliberation_id": "$response.body#/deliberation_id"}},
    },
    ("/deliberations/results", "post", "200"): {
        "GetDeliberation": {"to": ("/deliberation/{deliberation_id}", "get"),
                            "parameters": {"deliberation_id": "$response.body#/deliberation_id"}},
    },
    ("/oracle/judgments", "post", "200"): {
        "GetProfile": {"to": ("/oracle/profiles/{agent_id}", "get"),
                       "parameters": {"agent_id": "$response.body#/agent_id"}},
        "GetHistory": {"to": ("/oracle/profiles/{agent_id}/history", "get"),
                       "parameters": {"agent_id": "$response.body#/agent_id"}},
        "GetValidationRate": {"to": ("/oracle/agents/{agent_id}/validation-rate", "get"),
                              "parameters": {"agent_id": "$response.body#/agent_id"}},
        "Validate": {"to": ("/oracle/validations", "post"),
                     "requestBody": {"agent_id": "$response.body#/agent_id",
                                     "contract_id": "$response.body#/contract_id",
                                     "passed": False}},
    },
    ("/oracle/validations", "post", "200"): {
        "GetProfile": {"to": ("/oracle/profiles/{agent_id}", "get"),
                       "parameters": {"agent_id": "$response.body#/agent_id"}},
    },
}  # fmt: skip
"""OpenAPI links: what a write's response lets a client ask next (schemathesis's stateful
tests follow them: heartbeat, then the agent; judgment, then profile, ledger, validation)."""


def document(doc: dict[str, Any]) -> dict[str, Any]:
    """The generated OpenAPI document completed: each operation's error responses (those
    it can return, ``api/openapi_errors.py``) in the one shape (instead of FastAPI's
    ``{"detail"}``), the links, and the heartbeat's body described as an agent
    declaration."""
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for model in (ErrorOut, AgentConfig):
        found = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(found.pop("$defs", {}))
        schemas[model.__name__] = found
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}}
    ids = {(path, method): op["operationId"] for path, item in doc["paths"].items()
           for method, op in item.items()}  # fmt: skip
    for path, item in doc["paths"].items():
        for method, op in item.items():
            op["responses"].pop("422", None)  # FastAPI's, in its own shape: ours below
            for status in ERRORS.get((path, method), tuple(ERROR_STATUSES)):
                op["responses"][status] = {"description": ERROR_STATUSES[status], **error}
            if "401" in op["responses"]:
                op["responses"]["401"]["headers"] = {"WWW-Authenticate": {
                    "description": "Bearer", "schema": {"type": "string"}}}  # fmt: skip
    for (path, method, status), (header, what) in HEADERS.items():
        if path in doc["paths"]:
            response = doc["paths"][path][method]["responses"][status]
            response.setdefault("headers", {})[header] = {
                "description": what,
                "schema": {"type": "string"},
            }
    heartbeat = doc["paths"]["/agents/heartbeat"]["post"]["requestBody"]["content"]
    heartbeat["application/json"]["schema"] = {"$ref": "#/components/schemas/AgentConfig"}
    _bound_request_numbers(doc)
    for (path, method, status), links in LINKS.items():
        response = doc["paths"][path][method]["responses"][status]
        response["links"] = {
            name: {"operationId": ids[link["to"]],
                   **{k: v for k, v in link.items() if k != "to"}}
            for name, link in links.items()
        }  # fmt: skip
    return doc


MAX_NUMBER = 2**53
"""``deps.MAX_JSON_NUMBER``: the magnitude no number in a request body may pass."""


def _bound_request_numbers(doc: dict[str, Any]) -> None:
    """Say in the request bodies' schemas what ``deps.check_json`` enforces: every number
    within 2**53 in magnitude (so generated valid bodies are valid)."""
    schemas = doc["components"]["schemas"]
    pending = [
        op["requestBody"]["content"]["application/json"]["schema"]
        for item in doc["paths"].values()
        for op in item.values()
        if "requestBody" in op
    ]
    seen: set[str] = set()
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in seen:
            seen.add(ref.rsplit("/", 1)[-1])
            pending.append(schemas[ref.rsplit("/", 1)[-1]])
        if node.get("type") in ("number", "integer"):
            node.setdefault("maximum", MAX_NUMBER)
            node.setdefault("minimum", -MAX_NUMBER)
        pending.extend(v for v in node.values() if isinstance(v, dict | list))
