"""The Sentinels: how often an agent's work is validated, and what a failed check does.

``should_validate`` samples by the agent's level (with a task type, its level there):
rookies always, reliable agents 20 %, trusted 5 %, experts only on request (``force``).
The random source is injected and seedable, so a run can be reproduced; one draw is made
per decision, forced or not, so the sequence of draws does not depend on the requests.

``record_validation`` records the verdict on a judged task once. A failed validation
counts the task as failed for the streaks and the success rate; it takes back no XP.
"""

from __future__ import annotations

import random

from agentladder.domain.award import apply_validation_failure
from agentladder.domain.judgment import Judgment, TaskPosition
from agentladder.domain.privileges import SamplingDecision, sampling_decision
from agentladder.domain.profile import AgentProfile
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

    async def should_validate(
        self, agent_id: str, task_type: str | None = None, force: bool = False
    ) -> SamplingDecision:
        """Whether to validate this agent's output now, why, at which rate and level."""
        privileges = await self.oracle.get_privileges(agent_id, task_type)
        draw = self._rng.random()
        return sampling_decision(privileges.level, privileges.validation_rate, draw, force)

    async def record_validation(
        self, agent_id: str, contract_id: str, passed: bool, notes: str = ""
    ) -> ValidationResult:
        """Record the verdict on the judged task ``contract_id``, once."""
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
        judgment = Judgment.model_validate(judged.payload)
        position = TaskPosition.model_validate(judged.result["position"])
        counted = not passed and judgment.success
        at = iso(self.oracle.clock.now())

        def fold(profile: AgentProfile | None) -> OracleCommit:
            if profile is None:
                raise NotFound("profile", agent_id)
            after = apply_validation_failure(profile, judgment, position) if counted else profile
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
        if self.oracle.skill is not None:  # evidence once per verdict (a repeat heals a gap)
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
