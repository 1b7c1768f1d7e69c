"""Each method's request to the API (docs/api.md), built once for both clients. A request
model is taken as the model, a dict or keyword arguments (``core.as_model``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from agentladder.client.core import Call, as_model
from agentladder.client.models import (
    Accepted,
    AgentConfig,
    AgentOut,
    AgentProfile,
    AgentSkillsOut,
    BatchIn,
    BatchOut,
    CallOutcomeIn,
    CallRecordedOut,
    DeliberationOut,
    ExternalDeliberation,
    JudgesOut,
    JudgmentRequest,
    JudgmentResult,
    RouteOut,
    RouteRequest,
    SamplingDecision,
    SavingsReport,
    SentinelCheck,
    SkillBoardOut,
    SkillFitOut,
    ValidationIn,
    ValidationResult,
)

__all__ = [
    "agent_skills",
    "batch",
    "check",
    "deliberation",
    "fit_skills",
    "heartbeat",
    "judge",
    "profile",
    "record_call",
    "report",
    "route",
    "savings",
    "skill_judges",
    "skills",
    "verdict",
]


def _id(value: str) -> str:
    return quote(value, safe="")


def _sendable(judgment: JudgmentRequest) -> JudgmentRequest:
    """The judgment as sent: its score as the model holds it, on 0-10 (a ``scale`` was
    applied when the model was built, so it is not sent again)."""
    if judgment.scale is None:
        return judgment
    return JudgmentRequest.model_validate(
        judgment.model_dump(exclude_unset=True, exclude={"scale"})
    )


def judge(given: object, fields: Mapping[str, object]) -> Call[JudgmentResult]:
    """``POST /oracle/judgments``: a ``JudgmentRequest``, a dict, or its keywords."""
    judgment = as_model(JudgmentRequest, given, fields)
    return Call("POST", "/oracle/judgments", JudgmentResult, _sendable(judgment))


def batch(judgments: Sequence[object], start: int = 0) -> Call[BatchOut]:
    """``POST /oracle/judgments/batch``: one chunk (at most ``BATCH_MAX``), each judgment a
    ``JudgmentRequest`` or a dict; ``start``: the index of the first among all (a refused
    dict is named ``judgments.<index>.<field>``)."""
    sent = [
        _sendable(as_model(JudgmentRequest, j, {}, where=f"judgments.{start + i}."))
        for i, j in enumerate(judgments)
    ]
    body = BatchIn.model_construct(judgments=sent, _fields_set={"judgments"})
    return Call("POST", "/oracle/judgments/batch", BatchOut, body)


def report(given: object, fields: Mapping[str, object]) -> Call[Accepted]:
    """``POST /deliberations/results``: an ``ExternalDeliberation``, a dict, or its
    keywords."""
    deliberation = as_model(ExternalDeliberation, given, fields)
    return Call("POST", "/deliberations/results", Accepted, deliberation)


def check(agent_id: str, task_type: str | None, force: bool) -> Call[SamplingDecision]:
    """``POST /oracle/sentinel/check``."""
    body = SentinelCheck(agent_id=agent_id, task_type=task_type, force=force)
    return Call("POST", "/oracle/sentinel/check", SamplingDecision, body)


def verdict(agent_id: str, contract_id: str, passed: bool, notes: str) -> Call[ValidationResult]:
    """``POST /oracle/validations``."""
    body = ValidationIn(agent_id=agent_id, contract_id=contract_id, passed=passed, notes=notes)
    return Call("POST", "/oracle/validations", ValidationResult, body)


def _fresh(fresh: bool) -> str | None:
    """``?fresh=true`` when asked for, else no parameter (the request as before it existed)."""
    return "true" if fresh else None


def skills(task_type: str | None, limit: int, fresh: bool = False) -> Call[SkillBoardOut]:
    """``GET /skills``."""
    params = {"task_type": task_type, "limit": limit, "fresh": _fresh(fresh)}
    return Call("GET", "/skills", SkillBoardOut, params=params)


def agent_skills(agent_id: str, fresh: bool = False) -> Call[AgentSkillsOut]:
    """``GET /agents/{agent_id}/skills``."""
    params = {"fresh": _fresh(fresh)}
    return Call("GET", f"/agents/{_id(agent_id)}/skills", AgentSkillsOut, params=params)


def fit_skills() -> Call[SkillFitOut]:
    """``POST /skills/fit``: no body."""
    return Call("POST", "/skills/fit", SkillFitOut)


def skill_judges() -> Call[JudgesOut]:
    """``GET /skills/judges``."""
    return Call("GET", "/skills/judges", JudgesOut)


def route(given: object, fields: Mapping[str, object]) -> Call[RouteOut]:
    """``POST /route``: a ``RouteRequest``, a dict, or its keywords; ``count`` is 1 when
    a dict or the keywords leave it out."""
    if given is None:
        fields = {"count": 1, **fields}
    elif isinstance(given, Mapping):
        given = {"count": 1, **given}
    return Call("POST", "/route", RouteOut, as_model(RouteRequest, given, fields))


def savings(window_s: float | None = None, seed: int = 0) -> Call[SavingsReport]:
    """``GET /routing/savings``."""
    params = {"window_s": window_s, "seed": seed}
    return Call("GET", "/routing/savings", SavingsReport, params=params)


def profile(agent_id: str) -> Call[AgentProfile]:
    """``GET /oracle/profiles/{agent_id}``."""
    return Call("GET", f"/oracle/profiles/{_id(agent_id)}", AgentProfile)


def heartbeat(given: object, fields: Mapping[str, object]) -> Call[AgentOut]:
    """``POST /agents/heartbeat``: the whole declaration, as an agent process sends it (an
    ``AgentConfig``, a dict, or its keywords)."""
    agent = as_model(AgentConfig, given, fields)
    return Call(
        "POST", "/agents/heartbeat", AgentOut, agent, whole=True,
        exclude=frozenset({"estimated_cost_per_round"}),  # the server's to compute
    )  # fmt: skip


def deliberation(deliberation_id: str) -> Call[DeliberationOut]:
    """``GET /deliberation/{deliberation_id}``."""
    return Call("GET", f"/deliberation/{_id(deliberation_id)}", DeliberationOut)


def record_call(
    agent_id: str, given: object, fields: Mapping[str, object]
) -> Call[CallRecordedOut]:
    """``POST /agents/{agent_id}/calls``: a ``CallOutcomeIn``, a dict, or its keywords."""
    body = as_model(CallOutcomeIn, given, fields)
    return Call("POST", f"/agents/{_id(agent_id)}/calls", CallRecordedOut, body)
