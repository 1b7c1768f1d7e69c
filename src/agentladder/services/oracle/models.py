"""What the Oracle service takes and returns, and the idempotency fingerprint of a request."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentladder.domain.agents import AgentName
from agentladder.domain.award import AchievementUnlock, LevelChange, SpecializationLevelChange
from agentladder.domain.judgment import OPTIONAL_FIELDS, Judgment
from agentladder.domain.levels import Level
from agentladder.domain.profile import AgentProfile
from agentladder.domain.scales import SCALES, Scale, to_ten
from agentladder.domain.xp import XPLine
from agentladder.errors import InvalidInput

__all__ = [
    "JudgmentRequest",
    "JudgmentResult",
    "RawAwardResult",
    "ValidationResult",
    "VerifyReport",
    "fingerprint",
    "judgment_payload",
    "same_judgment",
]

MAX_OUTPUT = 1_000_000


class JudgmentRequest(Judgment):
    """A judged task as submitted: the judgment plus the output a judge may score, and
    whether the caller means an agent the Oracle does not know yet (``new_agent``)."""

    output: str | None = Field(default=None, max_length=MAX_OUTPUT)
    new_agent: bool = Field(
        default=False,
        description="the agent is new: judge it even though nobody configured, registered or"
        " judged it before (else such an id is refused as a likely typo)",
    )

    scale: Scale | None = Field(
        default=None,
        description="the scale `score` is given on (0-10 when absent): 0-1, 1-10, 0-10 or"
        " 0-100, mapped to 0-10 from the scale's lowest value (0) to its highest (10); on"
        " 1-10, 1 is the worst",
    )

    @model_validator(mode="before")
    @classmethod
    def _to_ten(cls, data: Any) -> Any:
        """``score`` mapped from its ``scale`` to 0-10 (the field then checks 0-10)."""
        scale = data.get("scale") if isinstance(data, dict) else None
        if not isinstance(scale, str) or scale not in SCALES:
            return data  # no scale, or one the field refuses
        score = data.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float):
            return data
        try:
            return {**data, "score": to_ten(float(score), scale)}
        except ValueError as error:
            raise InvalidInput("score", score, str(error)) from None

    def judgment(self, **resolved: object) -> Judgment:
        """The judgment without the output, with resolved fields (score, provider, model)."""
        values = {name: getattr(self, name) for name in Judgment.__pydantic_fields__}
        values.update(resolved)
        return Judgment.model_validate(values)


NOT_PAYLOAD = frozenset({"new_agent", "history"})
_OPTIONAL = OPTIONAL_FIELDS | {"scale"}
"""Fields of a judgment request that say how to apply it, not what was judged: the same
contract sent again with other values of them is the same judgment (a file imported
before ``history`` existed is all duplicates when imported again)."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
"""What ``json.dumps(value, sort_keys=True, separators=(",", ":"))`` uses, made once."""


def fingerprint(values: BaseModel | Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of ``values``: same request, same fingerprint."""
    if isinstance(values, JudgmentRequest):
        plain = _payload_fields(values)
    elif isinstance(values, BaseModel):
        plain = values.model_dump(mode="json")
    else:
        plain = dict(values)
    canonical = _CANONICAL.encode(plain)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _plain(model: Judgment, leave: Collection[str]) -> dict[str, Any] | None:
    """``model_dump(mode="json", exclude=leave)`` read from the model's values, in the
    order of its fields, when they are JSON already: None when a time or a complexity
    (which the dump turns into text) is there. Every other field is a str, a number, a
    bool or None."""
    if model.observed_at is not None or model.complexity is not None:
        return None
    values = model.__dict__
    return {name: values[name] for name in type(model).__pydantic_fields__ if name not in leave}


def _payload_fields(request: JudgmentRequest) -> dict[str, Any]:
    """The fields a request's fingerprint covers, as ``model_dump(mode="json")`` gives them."""
    leave = NOT_PAYLOAD | {name for name in _OPTIONAL if getattr(request, name) is None}
    plain = _plain(request, leave)
    return request.model_dump(mode="json", exclude=set(leave)) if plain is None else plain


def judgment_payload(judgment: Judgment) -> dict[str, Any]:
    """What an Oracle event stores of a judgment: ``history`` only when true and the
    optional fields only when given, so that a judgment is stored as it always was."""
    absent = {name for name in OPTIONAL_FIELDS if getattr(judgment, name) is None}
    if not judgment.history:
        absent.add("history")
    plain = _plain(judgment, absent)
    return judgment.model_dump(mode="json", exclude=absent) if plain is None else plain


def same_judgment(payload_hash: str, payload: Mapping[str, Any], digest: str) -> bool:
    """Whether a request with fingerprint ``digest`` repeats the judgment stored with
    ``payload_hash`` and ``payload``: the same request, or one stating exactly what was
    applied (its score, provider and model as the Oracle resolved them: a line of
    ``agentladder export judgments``)."""
    if payload_hash == digest:
        return True
    try:
        applied = JudgmentRequest.model_validate(dict(payload))
    except ValidationError:
        return False
    return fingerprint(applied) == digest


_FROZEN = ConfigDict(frozen=True, extra="forbid")


class JudgmentResult(BaseModel):
    """The award of one judgment. A repeated contract returns the first one, duplicate=true."""

    model_config = _FROZEN

    agent_id: str
    contract_id: str
    task_type: str
    score: float | None
    judged_by: str | None = Field(description="the judge that scored it, if a judge did")
    xp_awarded: int = Field(description="task XP; achievement XP is listed in achievements")
    total_xp: int = Field(
        description="the XP this judgment earned: task XP plus achievement XP (the agent's"
        " total is profile.xp)"
    )
    breakdown: tuple[XPLine, ...]
    level_up: LevelChange | None
    specialization_level_up: SpecializationLevelChange | None
    achievements: tuple[AchievementUnlock, ...]
    duplicate: bool = False
    profile: AgentProfile


class RawAwardResult(BaseModel):
    """XP awarded for a named event outside a judged task."""

    model_config = _FROZEN

    agent_id: str
    event_id: str
    event: str
    xp_awarded: int
    achievements: tuple[AchievementUnlock, ...]
    level_up: LevelChange | None
    duplicate: bool = False
    profile: AgentProfile


class ValidationResult(BaseModel):
    """A Sentinel's verdict on one judged task, as recorded."""

    model_config = _FROZEN

    agent_id: AgentName
    contract_id: str
    passed: bool
    notes: str
    counted_as_failure: bool = Field(description="the task now counts as failed")
    duplicate: bool = False
    level: Level


class VerifyReport(BaseModel):
    """The result of rebuilding every profile from its events, and every skill state from
    the skill log."""

    model_config = _FROZEN

    agents_checked: int
    events_replayed: int
    differences: dict[str, dict[str, tuple[object, object]]]
    skill_agents_checked: int = 0
    skill_events_replayed: int = 0
    skill_differences: list[str] = Field(
        default_factory=list, description="agents (and '(fleet)') whose skill state differs"
    )
    skill_rules_changed: bool = Field(
        default=False,
        description="the skill states were fitted with other rules than the configured ones:"
        " `agentladder skill rebuild` makes them current",
    )
    skill_fit_pending: int = Field(
        default=0,
        description="skill events applied since the last fit (folded on by filter steps,"
        " but for history's, which wait for the fit)",
    )

    @property
    def ok(self) -> bool:
        """True when every stored profile, ledger and skill state equals its replay (the
        skill states fitted with the configured rules)."""
        return not self.differences and not self.skill_differences and not self.skill_rules_changed
