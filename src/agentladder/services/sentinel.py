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
from agentladder.errors import AlreadyApplied, InvalidInput, NotFound, PayloadConflict
from agentladder.services.clock import iso
from agentladder.services.oracle import Oracle, committed_event, judgment_key, stored_event
from agentladder.services.oracle_models import ValidationResult, fingerprint
from agentladder.store.records import OracleEvent, OracleEventKind

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

        def fold(profile: AgentProfile | None) -> tuple[AgentProfile, OracleEvent]:
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
            return after, event

        existing = await store.get_event(agent_id, key)
        duplicate = existing is not None
        if existing is None:
            try:
                existing = committed_event(await self.oracle.commit_event(agent_id, fold))
            except AlreadyApplied as raced:
                existing, duplicate = stored_event(raced), True
        if existing.payload_hash != digest:
            raise PayloadConflict(f"{agent_id}/{key}")
        profile = await self.oracle.get_profile(agent_id)
        return ValidationResult.model_validate(
            {**existing.result, "agent_id": agent_id, "contract_id": contract_id,
             "duplicate": duplicate, "level": profile.level}
        )  # fmt: skip
