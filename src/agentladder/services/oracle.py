"""The Oracle: judged tasks earn itemized XP, levels, specializations and achievements.

Every change is one Oracle event committed atomically with its ledger lines and the new
profile (``Store.commit_oracle``), compare-and-set on the profile's revision and retried
on conflict. Events are idempotent per agent: a judgment by its contract id, a
validation by ``validation:<contract_id>``, a raw award by its event id. A repeat with
the same request returns the first result with ``duplicate=true``; a repeat with another
payload is a ``PayloadConflict``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from agentladder.domain.agents import AgentConfig, validate_agent_name
from agentladder.domain.award import (
    AchievementUnlock,
    LevelChange,
    apply_judgment,
    apply_raw_award,
    settle,
)
from agentladder.domain.judgment import TASK_TYPE_PATTERN, Judgment
from agentladder.domain.privileges import Privileges, privileges_for
from agentladder.domain.profile import AgentProfile, new_profile
from agentladder.domain.rules import OracleRules
from agentladder.domain.xp import XPLine
from agentladder.errors import AlreadyApplied, InvalidInput, NotFound, PayloadConflict
from agentladder.services.clock import Clock, SystemClock, iso
from agentladder.services.judges import Judge, check_not_own
from agentladder.services.oracle_models import (
    JudgmentRequest,
    JudgmentResult,
    RawAwardResult,
    fingerprint,
)
from agentladder.store.base import Store
from agentladder.store.leaderboard import check_limit
from agentladder.store.records import LeaderboardRow, OracleCommit, OracleEvent, OracleEventKind
from agentladder.store.retry import retry_on_conflict

__all__ = ["Oracle", "committed_event", "judgment_key", "stored_event"]

_TASK_TYPE = re.compile(TASK_TYPE_PATTERN)


def judgment_key(contract_id: str) -> str:
    """The idempotency key of a judgment."""
    return f"judgment:{contract_id}"


def check_task_type(task_type: str | None) -> str | None:
    """A task type must match ``[a-z0-9_.-]{1,64}``."""
    if task_type is not None and not _TASK_TYPE.fullmatch(task_type):
        raise InvalidInput("task_type", task_type, "must match [a-z0-9_.-]{1,64}")
    return task_type


class Oracle:
    """The level-up system over a store."""

    def __init__(
        self,
        store: Store,
        rules: OracleRules | None = None,
        *,
        clock: Clock | None = None,
        agents: Mapping[str, AgentConfig] | None = None,
        judge: Judge | None = None,
    ) -> None:
        self.store = store
        self.rules = rules or OracleRules()
        self.clock = clock or SystemClock()
        self.agents = dict(agents or {})
        self.judge = judge

    async def get_profile(self, agent_id: str) -> AgentProfile:
        """The agent's profile; ``NotFound`` when it was never judged."""
        found = await self.store.get_profile(validate_agent_name(agent_id, "agent_id"))
        if found is None:
            raise NotFound("profile", agent_id)
        return found.value

    async def _profile_or_none(self, agent_id: str) -> AgentProfile | None:
        found = await self.store.get_profile(validate_agent_name(agent_id, "agent_id"))
        return None if found is None else found.value

    async def commit_event(
        self,
        agent_id: str,
        fold: Callable[[AgentProfile | None], tuple[AgentProfile, OracleEvent] | None],
    ) -> OracleEvent | None:
        """Read, fold and commit under retry; None when ``fold`` has nothing to write.

        ``AlreadyApplied`` from a racing writer propagates with the stored event.
        """

        async def attempt() -> OracleEvent | None:
            current = await self.store.get_profile(agent_id)
            folded = fold(None if current is None else current.value)
            if folded is None:
                return None
            profile, event = folded
            revision = 0 if current is None else current.revision
            await self.store.commit_oracle(OracleCommit(event=event, profile=profile), revision)
            return event

        return await retry_on_conflict(attempt)

    async def submit_for_judgment(self, request: JudgmentRequest) -> JudgmentResult:
        """The specification's award process for one judged task, exactly once per contract."""
        digest = fingerprint(request)
        key = judgment_key(request.contract_id)
        existing = await self.store.get_event(request.agent_id, key)
        if existing is not None:
            return await self._repeat(existing, digest, request.contract_id)
        judgment, judged_by = await self._resolve(request)
        at = iso(self.clock.now())
        folded: list[JudgmentResult] = []

        def fold(profile: AgentProfile | None) -> tuple[AgentProfile, OracleEvent]:
            start = profile or new_profile(judgment.agent_id, judgment.provider, judgment.model)
            award = apply_judgment(start, judgment, self.rules, at)
            result = JudgmentResult(
                agent_id=judgment.agent_id,
                contract_id=judgment.contract_id,
                task_type=judgment.task_type,
                score=judgment.score,
                judged_by=judged_by,
                xp_awarded=award.xp_awarded,
                total_xp=award.total_xp,
                breakdown=award.breakdown,
                level_up=award.level_up,
                specialization_level_up=award.specialization_level_up,
                achievements=award.achievements,
                profile=award.profile,
            )
            folded.append(result)
            stored = result.model_dump(mode="json", exclude={"profile", "duplicate"})
            stored["position"] = award.position.model_dump()
            event = OracleEvent(
                agent_id=judgment.agent_id,
                key=key,
                kind=OracleEventKind.JUDGMENT,
                payload=judgment.model_dump(mode="json"),
                payload_hash=digest,
                result=stored,
                lines=award.ledger_lines,
                at=at,
            )
            return award.profile, event

        try:
            committed_event(await self.commit_event(judgment.agent_id, fold))
        except AlreadyApplied as raced:
            return await self._repeat(stored_event(raced), digest, request.contract_id)
        return folded[-1]  # the fold of the attempt that committed

    async def _resolve(self, request: JudgmentRequest) -> tuple[Judgment, str | None]:
        """Fill in the score (from the judge) and provider and model (from the config)."""
        resolved: dict[str, Any] = {}
        config = self.agents.get(request.agent_id)
        if config is not None:
            resolved["provider"] = config.provider_id or request.provider
            resolved["model"] = config.model_name or request.model
        judged_by = None
        if request.score is None and self.judge is not None:
            bare = request.judgment()
            check_not_own(self.judge, bare)
            resolved["score"] = await self.judge.score(bare, request.output)
            judged_by = self.judge.name
        return request.judgment(**resolved), judged_by

    async def _repeat(self, existing: OracleEvent, digest: str, what: str) -> JudgmentResult:
        if existing.payload_hash != digest:
            raise PayloadConflict(f"{existing.agent_id}/{what}")
        return await self._result(existing, duplicate=True)

    async def _result(self, event: OracleEvent, *, duplicate: bool) -> JudgmentResult:
        profile = await self.get_profile(event.agent_id)
        values = {k: v for k, v in event.result.items() if k != "position"}
        return JudgmentResult.model_validate({**values, "duplicate": duplicate, "profile": profile})

    async def award_xp(
        self, agent_id: str, event_name: str, xp: int, event_id: str
    ) -> RawAwardResult:
        """Award ``xp`` for a named event (overall XP only), once per ``event_id``."""
        validate_agent_name(agent_id, "agent_id")
        check_task_type(event_name.replace(":", "_"))
        if isinstance(xp, bool) or not isinstance(xp, int) or xp < 0:
            raise InvalidInput("xp", xp, "must be an integer >= 0 (XP is never taken away)")
        if not event_id.strip():
            raise InvalidInput("event_id", event_id, "must not be blank")
        key = f"award:{event_id}"
        payload = {"event": event_name, "xp": xp, "event_id": event_id}
        digest = fingerprint(payload)
        at = iso(self.clock.now())

        def fold(profile: AgentProfile | None) -> tuple[AgentProfile, OracleEvent]:
            raw = apply_raw_award(profile or new_profile(agent_id), event_name, xp, self.rules, at)
            lines = (raw.line, *(_line(a) for a in raw.achievements))
            result = {
                "event": event_name,
                "xp_awarded": xp,
                "achievements": [a.model_dump() for a in raw.achievements],
                "level_up": None if raw.level_up is None else raw.level_up.model_dump(mode="json"),
            }
            return raw.profile, OracleEvent(
                agent_id=agent_id, key=key, kind=OracleEventKind.RAW_AWARD, payload=payload,
                payload_hash=digest, result=result, lines=lines, at=at,
            )  # fmt: skip

        existing = await self.store.get_event(agent_id, key)
        duplicate = existing is not None
        if existing is None:
            try:
                existing = await self.commit_event(agent_id, fold)
            except AlreadyApplied as raced:
                existing, duplicate = stored_event(raced), True
        existing = committed_event(existing)
        if existing.payload_hash != digest:
            raise PayloadConflict(f"{agent_id}/{key}")
        return RawAwardResult.model_validate(
            {**existing.result, "agent_id": agent_id, "event_id": event_id,
             "duplicate": duplicate, "profile": await self.get_profile(agent_id)}
        )  # fmt: skip

    async def check_level_up(self, agent_id: str) -> LevelChange | None:
        """Bring levels and achievements up to the rules in force; the level change, if any."""
        change, _ = await self._settle_now(agent_id)
        return change

    async def check_achievements(self, agent_id: str) -> list[AchievementUnlock]:
        """Award every achievement the agent meets and lacks; those unlocked now."""
        _, unlocked = await self._settle_now(agent_id)
        return unlocked

    async def _settle_now(
        self, agent_id: str
    ) -> tuple[LevelChange | None, list[AchievementUnlock]]:
        at = iso(self.clock.now())
        outcome: dict[str, Any] = {"change": None, "unlocked": []}

        def fold(profile: AgentProfile | None) -> tuple[AgentProfile, OracleEvent] | None:
            if profile is None:
                raise NotFound("profile", agent_id)
            settled, unlocked = settle(profile, self.rules, at)
            if settled == profile:
                return None
            change = (
                None
                if settled.level == profile.level
                else LevelChange(from_level=profile.level, to_level=settled.level)
            )
            outcome.update(change=change, unlocked=list(unlocked))
            key = f"settle:{uuid.uuid4().hex}"
            return settled, OracleEvent(
                agent_id=agent_id, key=key, kind=OracleEventKind.SETTLE, payload={},
                payload_hash="", result={}, lines=tuple(_line(a) for a in unlocked), at=at,
            )  # fmt: skip

        validate_agent_name(agent_id, "agent_id")
        await self.commit_event(agent_id, fold)
        return outcome["change"], outcome["unlocked"]

    async def get_privileges(self, agent_id: str, task_type: str | None = None) -> Privileges:
        """The agent's privileges, overall or for a task type (a never-judged agent: rookie)."""
        check_task_type(task_type)
        return privileges_for(await self._profile_or_none(agent_id), self.rules, task_type)

    async def get_validation_rate(self, agent_id: str, task_type: str | None = None) -> float:
        """How often the Sentinels check this agent's work (for a task type: its level there)."""
        return (await self.get_privileges(agent_id, task_type)).validation_rate

    async def get_leaderboard(
        self, task_type: str | None = None, limit: int = 10
    ) -> list[LeaderboardRow]:
        """Top agents by XP, overall or in one task type."""
        check_task_type(task_type)
        return await self.store.leaderboard(task_type, check_limit(limit))


def stored_event(raced: AlreadyApplied) -> OracleEvent:
    """The event a racing writer stored first."""
    if not isinstance(raced.existing, OracleEvent):
        raise TypeError(f"the store reported {raced.key!r} applied without its event")
    return raced.existing


def committed_event(event: OracleEvent | None) -> OracleEvent:
    if event is None:
        raise TypeError("an award fold wrote nothing")
    return event


def _line(unlock: AchievementUnlock) -> XPLine:
    return XPLine(event=unlock.event, xp=unlock.xp)
