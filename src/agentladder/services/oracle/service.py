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
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import Any

from agentladder.domain.agents import AgentConfig, validate_agent_name
from agentladder.domain.award import (
    AchievementUnlock,
    Award,
    LevelChange,
    apply_judgment,
    apply_raw_award,
    settle,
)
from agentladder.domain.frozen import built
from agentladder.domain.judgment import CONTRACT_ID_MAX, TASK_TYPE_PATTERN, Judgment
from agentladder.domain.privileges import (
    Privileges,
    TaskAllowance,
    privileges_for,
    task_allowance,
)
from agentladder.domain.probation import (
    EffectiveRate,
    SentinelSettings,
    on_judgment,
    on_model_change,
    rate_for,
)
from agentladder.domain.profile import AgentProfile, new_profile
from agentladder.domain.rules import Complexity, OracleRules
from agentladder.domain.skill.evidence import DEFAULT_JUDGE, ScoreEvidence
from agentladder.domain.task_types import check_agent_task_type
from agentladder.domain.text import check_visible
from agentladder.domain.xp import XPLine
from agentladder.errors import (
    InvalidInput,
    NotFound,
    PayloadConflict,
)
from agentladder.services.clock import Clock, SystemClock, iso
from agentladder.services.oracle.judges import Judge, check_not_own
from agentladder.services.oracle.known import (
    KnownNames,
    declared,
    known_ids,
    not_found,
    refusal,
)
from agentladder.services.oracle.models import (
    JudgmentRequest,
    JudgmentResult,
    RawAwardResult,
    fingerprint,
    judgment_payload,
    same_judgment,
)
from agentladder.services.oracle.task_types import TaskTypeBook
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.service import SkillService, checked
from agentladder.store.base import OracleApplied, OracleFold, Store
from agentladder.store.leaderboard import check_limit
from agentladder.store.records import LeaderboardRow, OracleCommit, OracleEvent, OracleEventKind

__all__ = ["Oracle", "judgment_key", "repeated_result", "stored_history"]

CLOCK_SKEW_S = 300.0
"""How far ahead of this server's clock a judgment's ``observed_at`` may be (another
machine's clock): further is refused as in the future."""
_TASK_TYPE = re.compile(TASK_TYPE_PATTERN)
_EVENT_NAME = re.compile(r"[a-z0-9_.:-]{1,64}")


def judgment_key(contract_id: str) -> str:
    """The idempotency key of a judgment."""
    return f"judgment:{contract_id}"


def stored_history(event: OracleEvent) -> bool:
    """Whether a stored judgment is history (past work), whose skill evidence is deferred
    to the next fit: the stored payload decides, whoever repeats the judgment."""
    return event.payload.get("history") is True


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
        skill: SkillService | None = None,
        sentinel: SentinelSettings | None = None,
    ) -> None:
        self.store = store
        self.skill = skill
        self.rules = rules or OracleRules()
        self.sentinel = sentinel or SentinelSettings()
        self.clock = clock or SystemClock()
        self.agents = dict(agents or {})
        self.known = KnownNames(store, self.agents)  # for suggestions (did you mean)
        self.judge = judge
        self.awards: Counter[str] = Counter()  # kind -> awards applied, for /metrics
        self.task_types = TaskTypeBook(store, self.rules)  # the store's bound on task types

    async def get_profile(self, agent_id: str) -> AgentProfile:
        """The agent's profile; before its first event, a configured or registered agent's
        is the rookie profile (``services/oracle/known.py``); ``NotFound`` for another."""
        found = await self.store.get_profile(validate_agent_name(agent_id, "agent_id"))
        if found is not None:
            return found.value
        config = await declared(self.store, self.agents, agent_id)
        if config is None:
            raise await not_found("profile", agent_id, self.known)
        return new_profile(agent_id, config.provider_id, config.model_name)

    async def check_known(self, agent_id: str, *, new_agent: bool = False) -> AgentConfig | None:
        """The agent's declaration (None when it has none). An agent nobody configured,
        registered or judged before is refused (``UnknownAgent``, naming the closest known
        ids: most likely a typo) unless ``new_agent``, ``oracle.accept_unregistered``, or
        the store knows no agent at all yet (``services/oracle/known.py``)."""
        config = await declared(self.store, self.agents, agent_id)
        if config is not None or new_agent or self.rules.accept_unregistered:
            return config
        if await self.store.get_profile(agent_id) is not None:
            return None
        known = await known_ids(self.store, self.agents)
        if known:
            raise refusal(agent_id, known)
        return None

    async def _profile_or_none(self, agent_id: str) -> AgentProfile | None:
        found = await self.store.get_profile(validate_agent_name(agent_id, "agent_id"))
        return None if found is None else found.value

    async def apply(self, agent_id: str, key: str, fold: OracleFold) -> OracleApplied:
        """Apply the event ``fold`` builds, once per (agent_id, key); the stored outcome."""
        applied = await self.store.apply_oracle(agent_id, key, fold)
        if applied is None:
            raise TypeError(f"the fold of {agent_id}/{key} wrote nothing")
        return applied

    async def submit_for_judgment(
        self, request: JudgmentRequest, *, evidence: bool = True, settled: bool = False
    ) -> JudgmentResult:
        """The specification's award process for one judged task, exactly once per contract;
        then, unless ``evidence`` is false (a judgment the orchestrator derives from a
        deliberation, whose peer scores the skill model has already), the judgment is
        evidence for the skill model, once per contract (a repeat applies it if a crash
        left it out). ``settled``: its evidence is applied before the answer even where the
        store queues it for an applier (a one-shot command, whose caller reads the skill
        next and may have no applier running: the award is then written as an instance
        without the queue writes it, and the applier leaves it alone)."""
        skill = self.skill if evidence else None
        result, observed, history = await self._judged(request, skill, queued=not settled)
        if skill is not None and not observed:
            await skill.observe(self._evidence(request, result, history))
        return result

    def _evidence(
        self, request: JudgmentRequest, result: JudgmentResult, history: bool
    ) -> ScoreEvidence:
        """The skill evidence of a judgment, from its result (a repeat's: the first),
        deferred when the stored judgment is history."""
        return judgment_evidence(
            result.agent_id, result.contract_id, result.task_type, result.score,
            request.success, self.observed(request),
            judge=request.judge or result.judged_by or DEFAULT_JUDGE, deferred=history,
        )  # fmt: skip

    def observed(self, request: JudgmentRequest) -> float:
        """When the judged work happened (seconds since the epoch): ``observed_at``, else
        now; ``InvalidInput`` for a time more than ``CLOCK_SKEW_S`` ahead of this clock."""
        now = self.clock.now().timestamp()
        if request.observed_at is None:
            return now
        at = request.observed_at.timestamp()
        if at > now + CLOCK_SKEW_S:
            raise InvalidInput("observed_at", request.observed_at.isoformat(), "is in the future")
        return at

    async def _judged(
        self, request: JudgmentRequest, skill: SkillService | None, *, queued: bool = True
    ) -> tuple[JudgmentResult, bool, bool]:
        """The result; whether its skill evidence was applied with a new event (one
        store write: ``Store.apply_oracle_then_skill``) or left with the award for the
        store's queue (unless ``queued`` is false), a repeat's being left to the caller;
        and whether the stored judgment is history."""
        self.observed(request)  # refused before anything is stored
        digest = fingerprint(request)
        key = judgment_key(request.contract_id)
        if request.score is None and self.judge is not None:
            existing = await self.store.get_event(request.agent_id, key)
            if existing is not None:  # answer a repeat without judging it again
                profile = await self.get_profile(request.agent_id)
                return self._repeat(existing, profile, digest), False, stored_history(existing)
        judgment, judged_by = await self._resolve(request)
        await self.task_types.admit([judgment.task_type])
        fold, folded = self.judgment_fold(judgment, judged_by, digest, iso(self.clock.now()))
        if skill is None:
            applied: OracleApplied | None = await self.apply(judgment.agent_id, key, fold)
            observed = None
        elif skill.queue is not None and queued and not judgment.history:
            evidence = judgment_evidence(
                judgment.agent_id, judgment.contract_id, judgment.task_type, judgment.score,
                request.success, self.observed(request),
                judge=request.judge or judged_by or DEFAULT_JUDGE,
            )  # fmt: skip
            applied = await skill.award(judgment.agent_id, key, fold, evidence)
            if applied is not None and applied.created:
                self.awards["judgment"] += 1
                return folded[-1](), True, False
            observed = None  # a repeat: its evidence is applied now, once by key (the caller)
        else:
            # the evidence a created event gives (its result's values are the judgment's)
            evidence = judgment_evidence(
                judgment.agent_id, judgment.contract_id, judgment.task_type, judgment.score,
                request.success, self.observed(request),
                judge=request.judge or judged_by or DEFAULT_JUDGE, deferred=judgment.history,
            )  # fmt: skip
            item = skill.item(evidence)
            applied, observed = await self.store.apply_oracle_then_skill(
                judgment.agent_id, key, fold, item
            )
        if applied is None:
            raise TypeError(f"the fold of {judgment.agent_id}/{key} wrote nothing")
        if not applied.created:
            repeat = self._repeat(applied.event, applied.profile, digest)
            return repeat, False, stored_history(applied.event)
        self.awards["judgment"] += 1
        if observed is not None:
            checked(observed, evidence)
        return folded[-1](), observed is not None, judgment.history  # the committed fold

    def judgment_fold(
        self, judgment: Judgment, judged_by: str | None, digest: str, at: str
    ) -> tuple[OracleFold, list[Callable[[], JudgmentResult]]]:
        """The fold of one judgment's event, and the list each run of it appends the maker
        of its result to (the last one is that of the fold that was committed)."""
        key = judgment_key(judgment.contract_id)
        folded: list[Callable[[], JudgmentResult]] = []
        payload = judgment_payload(judgment)
        rules = self.rules
        named = {
            "agent_id": judgment.agent_id,
            "contract_id": judgment.contract_id,
            "task_type": judgment.task_type,
            "score": judgment.score,
            "judged_by": judged_by,
        }

        def fold(profile: AgentProfile | None) -> OracleCommit:
            start = profile or new_profile(judgment.agent_id, judgment.provider, judgment.model)
            check_agent_task_type(
                judgment.agent_id, start.specializations, judgment.task_type,
                rules.max_task_types_per_agent,
            )  # fmt: skip
            award = apply_judgment(start, judgment, rules, at)
            after = on_judgment(award.profile, judgment)  # a failed task starts probation
            folded.append(lambda: _result(named, award, after))
            # what JudgmentResult.model_dump gives, without building the result
            position = award.position
            stored = {
                **named,
                **award.result_json(),
                "total_xp": award.total_xp,
                "position": {"overall": position.overall, "in_task_type": position.in_task_type},
            }
            event = built(
                OracleEvent,
                agent_id=judgment.agent_id,
                key=key,
                kind=OracleEventKind.JUDGMENT,
                payload=payload,
                payload_hash=digest,
                result=stored,
                lines=award.ledger_lines,
                at=at,
                seq=0,
            )  # every field built here, of its type
            return built(OracleCommit, event=event, profile=after)

        return fold, folded

    async def _resolve(self, request: JudgmentRequest) -> tuple[Judgment, str | None]:
        """Fill in the score (from the judge) and provider and model (from the config)."""
        resolved: dict[str, Any] = {}
        config = await self.check_known(request.agent_id, new_agent=request.new_agent)
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
        # validated already: the request's fields, and a configuration's provider and
        # model (the same constraints as a judgment's)
        values = {name: getattr(request, name) for name in Judgment.__pydantic_fields__}
        return built(Judgment, **{**values, **resolved}), judged_by

    def _repeat(self, existing: OracleEvent, profile: AgentProfile, digest: str) -> JudgmentResult:
        """The first result of a repeated contract, or ``PayloadConflict`` for another payload."""
        return repeated_result(existing, profile, digest)

    async def award_xp(
        self, agent_id: str, event_name: str, xp: int, event_id: str, *, new_agent: bool = False
    ) -> RawAwardResult:
        """Award ``xp`` for a named event (overall XP only), once per ``event_id``; an agent
        the Oracle does not know only with ``new_agent`` (``check_known``)."""
        validate_agent_name(agent_id, "agent_id")
        if not _EVENT_NAME.fullmatch(event_name):
            raise InvalidInput("event", event_name, "must match [a-z0-9_.:-]{1,64}")
        if isinstance(xp, bool) or not isinstance(xp, int) or xp < 0:
            raise InvalidInput("xp", xp, "must be an integer >= 0 (XP is never taken away)")
        if not event_id.strip() or len(event_id) > CONTRACT_ID_MAX:
            raise InvalidInput("event_id", event_id, "must be 1 to 256 characters, not blank")
        check_visible(event_id, "event_id")
        await self.check_known(agent_id, new_agent=new_agent)
        key = f"award:{event_id}"
        payload = {"event": event_name, "xp": xp, "event_id": event_id}
        digest = fingerprint(payload)
        at = iso(self.clock.now())

        def fold(profile: AgentProfile | None) -> OracleCommit:
            raw = apply_raw_award(profile or new_profile(agent_id), event_name, xp, self.rules, at)
            result = {
                "event": event_name,
                "xp_awarded": xp,
                "achievements": [a.model_dump() for a in raw.achievements],
                "level_up": None if raw.level_up is None else raw.level_up.model_dump(mode="json"),
            }
            event = OracleEvent(
                agent_id=agent_id, key=key, kind=OracleEventKind.RAW_AWARD, payload=payload,
                payload_hash=digest, result=result,
                lines=(raw.line, *(_line(a) for a in raw.achievements)), at=at,
            )  # fmt: skip
            return OracleCommit(event=event, profile=raw.profile)

        applied = await self.apply(agent_id, key, fold)
        if applied.event.payload_hash != digest:
            raise PayloadConflict(f"{agent_id}/{key}")
        return RawAwardResult.model_validate(
            {**applied.event.result, "agent_id": agent_id, "event_id": event_id,
             "duplicate": not applied.created, "profile": applied.profile}
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
        """Commit a ``settle`` event when the rules in force raise a level or an achievement."""
        validate_agent_name(agent_id, "agent_id")
        at = iso(self.clock.now())
        key = f"settle:{uuid.uuid4().hex}"
        outcome: list[tuple[LevelChange | None, list[AchievementUnlock]]] = []

        def fold(profile: AgentProfile | None) -> OracleCommit | None:
            if profile is None:
                raise NotFound("profile", agent_id)
            settled, unlocked = settle(profile, self.rules, at)
            if settled == profile:
                return None
            change = None
            if settled.level != profile.level:
                change = LevelChange(from_level=profile.level, to_level=settled.level)
            outcome.append((change, list(unlocked)))
            event = OracleEvent(
                agent_id=agent_id, key=key, kind=OracleEventKind.SETTLE, payload={},
                payload_hash="", result={}, lines=tuple(_line(a) for a in unlocked), at=at,
            )  # fmt: skip
            return OracleCommit(event=event, profile=settled)

        applied = await self.store.apply_oracle(agent_id, key, fold)
        return outcome[-1] if applied is not None else (None, [])

    async def get_privileges(self, agent_id: str, task_type: str | None = None) -> Privileges:
        """The agent's privileges, overall or for a task type (a never-judged agent: rookie):
        the level's validation rate, and the effective rate the Sentinels use with its reason."""
        check_task_type(task_type)
        profile = await self._profile_or_none(agent_id)
        rate = rate_for(profile, self.rules, self.sentinel, task_type)
        return privileges_for(profile, self.rules, task_type).model_copy(
            update={
                "effective_rate": rate.effective_rate,
                "rate_reason": rate.reason.value,
                "clearance_left": rate.clearance_left,
            }
        )

    async def get_effective_rate(
        self, agent_id: str, task_type: str | None = None
    ) -> EffectiveRate:
        """The rate the Sentinels validate this agent's work at now, and why."""
        check_task_type(task_type)
        profile = await self._profile_or_none(agent_id)
        return rate_for(profile, self.rules, self.sentinel, task_type)

    async def model_changed(
        self, agent_id: str, key: str, model_name: str, provider_id: str
    ) -> bool:
        """A heartbeat changed the agent's model or provider: probation in every task type,
        once per ``key`` (the transition's); False for an agent never judged (nothing to
        put on probation: a rookie is validated every time)."""
        validate_agent_name(agent_id, "agent_id")
        payload = {"model_name": model_name, "provider_id": provider_id}
        digest = fingerprint(payload)
        at = iso(self.clock.now())

        def fold(profile: AgentProfile | None) -> OracleCommit | None:
            if profile is None:
                return None
            event = OracleEvent(
                agent_id=agent_id, key=key, kind=OracleEventKind.MODEL_CHANGE, payload=payload,
                payload_hash=digest, result={}, at=at,
            )  # fmt: skip
            return OracleCommit(event=event, profile=on_model_change(profile))

        applied = await self.store.apply_oracle(agent_id, key, fold)
        return applied is not None

    async def task_allowance(
        self, agent_id: str, task_type: str | None = None, complexity: Complexity | None = None
    ) -> TaskAllowance:
        """Whether the agent may take a task of ``complexity``, and its retries there."""
        check_task_type(task_type)
        profile = await self._profile_or_none(agent_id)
        return task_allowance(profile, self.rules, task_type, complexity)

    async def task_allowances(
        self,
        agent_ids: Collection[str],
        task_type: str | None = None,
        complexity: Complexity | None = None,
    ) -> dict[str, TaskAllowance]:
        """``task_allowance`` for several agents, their profiles read at once."""
        check_task_type(task_type)
        for agent_id in agent_ids:
            validate_agent_name(agent_id, "agent_id")
        profiles = await self.store.get_many_profiles(agent_ids)
        return {
            agent_id: task_allowance(
                None if (found := profiles.get(agent_id)) is None else found.value,
                self.rules,
                task_type,
                complexity,
            )
            for agent_id in agent_ids
        }

    async def get_validation_rate(self, agent_id: str, task_type: str | None = None) -> float:
        """How often the Sentinels check this agent's work (for a task type: its level there)."""
        return (await self.get_privileges(agent_id, task_type)).validation_rate

    async def admit_task_type(self, task_type: str, agent_ids: Collection[str]) -> None:
        """``TooManyTaskTypes`` when judging each of ``agent_ids`` in ``task_type`` would
        pass ``oracle.max_task_types_per_agent`` or the store's ``max_task_types`` (a
        deliberation's participants, before it is accepted)."""
        profiles = await self.store.get_many_profiles(agent_ids)
        for agent_id in agent_ids:
            found = profiles.get(agent_id)
            known = () if found is None else found.value.specializations
            check_agent_task_type(agent_id, known, task_type, self.rules.max_task_types_per_agent)
        await self.task_types.admit([task_type])

    async def get_leaderboard(
        self, task_type: str | None = None, limit: int = 10
    ) -> list[LeaderboardRow]:
        """Top agents by XP, overall or in one task type."""
        check_task_type(task_type)
        return await self.store.leaderboard(task_type, check_limit(limit))


def _result(named: Mapping[str, Any], award: Award, profile: AgentProfile) -> JudgmentResult:
    return JudgmentResult(
        **named,
        xp_awarded=award.xp_awarded,
        total_xp=award.total_xp,
        breakdown=award.breakdown,
        level_up=award.level_up,
        specialization_level_up=award.specialization_level_up,
        achievements=award.achievements,
        profile=profile,
    )


def repeated_result(existing: OracleEvent, profile: AgentProfile, digest: str) -> JudgmentResult:
    """The first result of a repeated contract, or ``PayloadConflict`` for another payload."""
    if not same_judgment(existing.payload_hash, existing.payload, digest):
        raise PayloadConflict(f"{existing.agent_id}/{existing.key}")
    values = {k: v for k, v in existing.result.items() if k != "position"}
    return JudgmentResult.model_validate({**values, "duplicate": True, "profile": profile})


def _line(unlock: AchievementUnlock) -> XPLine:
    return XPLine(event=unlock.event, xp=unlock.xp)
