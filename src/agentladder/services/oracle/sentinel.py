"""The Sentinels: how often an agent's work is validated, and what a failed check does.

``should_validate`` samples by the agent's level (with a task type, its level there):
rookies always, reliable agents 20 %, trusted 5 %, experts only on request (``force``).
The random source is injected and seedable, so a run can be reproduced; one draw is made
per decision, forced or not, so the sequence of draws does not depend on the requests.

``record_validation`` records the verdict on a judged task once. A failed validation
counts the task as failed for the streaks and the success rate; it takes back no XP.

Under the adaptive policy (``sentinel.policy``, ``domain/probation.py``) a failure puts
the agent on probation in that task type: the effective rate is 1.0 until ``clearance``
consecutive validations pass. ``should_validate`` draws at the effective rate and says
why; the level's rate stays as the specification sets it.
"""

from __future__ import annotations

import random
from collections import Counter

from agentladder.domain.award import apply_validation_failure
from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.privileges import SamplingDecision, sampling_decision
from agentladder.domain.probation import SentinelSettings, on_validation, rate_for
from agentladder.domain.profile import AgentProfile
from agentladder.domain.rules import OracleRules
from agentladder.domain.text import STORED
from agentladder.errors import InvalidInput, NotFound, PayloadConflict
from agentladder.services.clock import iso
from agentladder.services.oracle.models import ValidationResult, fingerprint
from agentladder.services.oracle.service import Oracle, judgment_key
from agentladder.services.skill.evidence import verdict_evidence
from agentladder.store.records import OracleCommit, OracleEvent, OracleEventKind

__all__ = ["MAX_NOTES", "Sentinel"]

MAX_NOTES = 10_000


class Sentinel:
    """Validation sampling and verdicts, over an Oracle."""

    def __init__(self, oracle: Oracle, *, seed: int | None = None) -> None:
        self.oracle = oracle
        self._rng = random.Random(seed)
        self.decisions: Counter[tuple[str, bool]] = Counter()  # (reason, validate), /metrics
        self.verdicts: Counter[tuple[str, str]] = Counter()  # (rate reason, outcome), /metrics

    async def should_validate(
        self, agent_id: str, task_type: str | None = None, force: bool = False
    ) -> SamplingDecision:
        """Whether to validate this agent's output now, why, at which (effective) rate and
        level: on probation every output, otherwise the level's rate."""
        privileges = await self.oracle.get_privileges(agent_id, task_type)
        draw = self._rng.random()
        rate = (
            privileges.validation_rate
            if privileges.effective_rate is None
            else privileges.effective_rate
        )
        decision = sampling_decision(
            privileges.level, rate, draw, force, level_rate=privileges.validation_rate,
            rate_reason=privileges.rate_reason or "level", clearance_left=privileges.clearance_left,
        )  # fmt: skip
        self.decisions[(decision.reason, decision.validate_output)] += 1
        return decision

    async def record_validation(
        self, agent_id: str, contract_id: str, passed: bool, notes: str = "",
        *, evidence: bool = True,
    ) -> ValidationResult:  # fmt: skip
        """Record the verdict on the judged task ``contract_id``, once. ``evidence``: the
        verdict is also skill evidence (an independent check of the answer); not where it
        is the judgment's own score read against a pass score (the gateway's checks: that
        judge's score is already the answer's one observation by it)."""
        if len(notes) > MAX_NOTES:
            raise InvalidInput(
                "notes", notes[:40] + "...", f"must be at most {MAX_NOTES} characters"
            )
        store = self.oracle.store
        judged = await store.get_event(agent_id, judgment_key(contract_id))
        if judged is None:
            raise NotFound("judgment", f"{agent_id}/{contract_id}")
        key = f"validation:{contract_id}"
        digest = fingerprint({"passed": passed, "notes": notes})
        judgment = Judgment.model_validate(judged.payload, context=STORED)
        position = TaskPosition.model_validate(judged.result["position"])
        counted = not passed and judgment.success
        at = iso(self.oracle.clock.now())
        rules, settings = self.oracle.rules, self.oracle.sentinel
        reasons: list[str] = []

        def fold(profile: AgentProfile | None) -> OracleCommit:
            if profile is None:
                raise NotFound("profile", agent_id)
            reasons.append(_verdict_reason(profile, rules, settings, judgment.task_type))
            after = apply_validation_failure(profile, judgment, position) if counted else profile
            after = on_validation(after, judgment, position, passed)
            payload = {
                "passed": passed,
                "notes": notes,
                "judgment": judged.payload,
                "position": position.model_dump(),
            }
            result = {"passed": passed, "notes": notes, "counted_as_failure": counted}
            event = OracleEvent(
                agent_id=agent_id, key=key, kind=OracleEventKind.VALIDATION, payload=payload,
                payload_hash=digest, result=result, at=at,
            )  # fmt: skip
            return OracleCommit(event=event, profile=after)

        applied = await self.oracle.apply(agent_id, key, fold)
        if applied.event.payload_hash != digest:
            raise PayloadConflict(f"{agent_id}/{key}")
        if applied.created:
            self.verdicts[(reasons[-1], "passed" if passed else "failed")] += 1
        if evidence and self.oracle.skill is not None:  # once per verdict (a repeat heals a gap)
            await self.oracle.skill.observe(
                verdict_evidence(
                    agent_id, contract_id, judgment.task_type, passed,
                    self.oracle.clock.now().timestamp(),
                )
            )  # fmt: skip
        return ValidationResult.model_validate(
            {**applied.event.result, "agent_id": agent_id, "contract_id": contract_id,
             "duplicate": not applied.created, "level": applied.profile.level}
        )  # fmt: skip


def _verdict_reason(
    profile: AgentProfile, rules: OracleRules, settings: SentinelSettings, task_type: str
) -> str:
    """Why the agent was being validated when a verdict came (for /metrics): its task
    type's probation, else its overall probation, else its task type's rate reason."""
    typed = rate_for(profile, rules, settings, task_type)
    if typed.clearance_left is None:
        overall = rate_for(profile, rules, settings)
        if overall.clearance_left is not None:
            return overall.reason.value
    return typed.reason.value
