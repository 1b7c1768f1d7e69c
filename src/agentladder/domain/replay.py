"""Rebuilding a profile from its event log, and comparing it with the stored one.

Each Oracle event is kept with its input (``payload``) and the time it was applied
(``at``). Folding the events of one agent in order with the same rules gives the profile
and every ledger line again, exactly: that is how ``oracle verify`` proves that the
stored state is the history's state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentladder.domain.award import (
    apply_judgment,
    apply_raw_award,
    apply_validation_failure,
    settle,
)
from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.probation import on_judgment, on_model_change, on_validation
from agentladder.domain.profile import AgentProfile, new_profile
from agentladder.domain.rules import OracleRules
from agentladder.domain.text import STORED
from agentladder.domain.xp import XPLine

__all__ = ["ReplayStep", "differences", "replay"]


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One event to fold: ``judgment``, ``raw_award`` or ``validation``, its input, its time."""

    kind: str
    payload: Mapping[str, Any]
    at: str


def replay(
    agent_id: str, steps: Iterable[ReplayStep], rules: OracleRules
) -> tuple[AgentProfile | None, list[XPLine]]:
    """The profile and the ledger lines that ``steps`` produce, folded in order.

    A judgment payload is a ``Judgment``; a raw award's is ``{"event", "xp"}``; a
    validation's is ``{"passed", "judgment", "position"}``; a settle (levels and
    achievements brought up to the rules in force) has none; a model change's is
    ``{"model_name", "provider_id"}`` (probation in every task type, ``domain/probation``).
    """
    profile: AgentProfile | None = None
    lines: list[XPLine] = []
    for step in steps:
        if step.kind == "judgment":
            judgment = Judgment.model_validate(step.payload, context=STORED)
            current = profile or new_profile(agent_id, judgment.provider, judgment.model)
            award = apply_judgment(current, judgment, rules, step.at)
            profile = on_judgment(award.profile, judgment)
            lines.extend(award.ledger_lines)
        elif step.kind == "raw_award":
            current = profile or new_profile(agent_id)
            raw = apply_raw_award(
                current, step.payload["event"], step.payload["xp"], rules, step.at
            )
            profile = raw.profile
            lines.append(raw.line)
            lines.extend(XPLine(event=a.event, xp=a.xp) for a in raw.achievements)
        elif step.kind == "settle":
            if profile is not None:
                profile, unlocked = settle(profile, rules, step.at)
                lines.extend(XPLine(event=a.event, xp=a.xp) for a in unlocked)
        elif step.kind == "validation":
            if profile is not None:
                judged = Judgment.model_validate(step.payload["judgment"], context=STORED)
                position = TaskPosition.model_validate(step.payload["position"])
                passed = bool(step.payload["passed"])
                if not passed:
                    profile = apply_validation_failure(profile, judged, position)
                profile = on_validation(profile, judged, position, passed)
        elif step.kind == "model_change":
            if profile is not None:
                profile = on_model_change(profile)
        else:
            raise ValueError(f"unknown event kind {step.kind!r}")
    return profile, lines


def differences(
    stored: AgentProfile | None, rebuilt: AgentProfile | None
) -> dict[str, tuple[Any, Any]]:
    """Field paths where ``stored`` and ``rebuilt`` differ, with (stored, rebuilt) values."""
    left = {} if stored is None else stored.model_dump(mode="json")
    right = {} if rebuilt is None else rebuilt.model_dump(mode="json")
    out: dict[str, tuple[Any, Any]] = {}

    def walk(path: str, a: Any, b: Any) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(f"{path}.{key}" if path else str(key), a.get(key), b.get(key))
        elif a != b:
            out[path] = (a, b)

    walk("", left, right)
    return out
