"""``routing_savings``: does routing pay on this store's gateway traffic? The routed
answers of a window read from the store with their judgments, then weighed by the pure
``domain/routing/savings.py`` on a CPU thread (docs/routing.md, "Does routing pay?").

Read: the newest ``limit`` served records answered in the last ``window_s`` seconds
(``Store.list_served``: memory and SQLite read no more; NATS at most ``limit``
messages), of them the routed ones (a record stored before the savings fields reads as
not routed) that carry a cost (a stream whose end was never recorded carries none:
counted ``uncosted``); for each, its two possible judgments in one read
(``Store.get_skill_events``): the gateway's check (the skill evidence
``judgment:<agent>:<contract>``) and the caller's feedback
(``judgment:<agent>:<contract>:feedback``); and the fleet's skill state once, for each
source's leniency at the task type as the last fit learned it. Nothing else: the
figures are the store's, shared by every instance (except the last second's records,
which an instance writes once a second: ``services/gateway/feedback.py``).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.routing.savings import RESAMPLES, Judged, RoutedAnswer, Savings, savings
from agentladder.domain.skill.observations import judge_source
from agentladder.domain.skill.state import FleetSkill
from agentladder.services.offload import off_loop
from agentladder.store.base import Store
from agentladder.store.served import ServedRequest
from agentladder.store.skills import SkillEvent

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_WINDOW_S",
    "MAX_LIMIT",
    "PANEL_MAX_AGE_S",
    "RecentSavings",
    "SavingsReport",
    "judgment_keys",
    "routing_savings",
]

DEFAULT_WINDOW_S = 7 * 86_400.0
"""The window by default: the last 7 days."""
DEFAULT_LIMIT = 10_000
"""The most served records read by default (the newest of the window)."""
MAX_LIMIT = 50_000
"""The most a caller may ask to read (two judgment keys each)."""
PANEL_MAX_AGE_S = 30.0
"""How long the dashboard's figures are shown before they are computed again."""


class SavingsReport(Savings):
    """The savings of a window, and what was read for them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    since: float = Field(description="the window's start, seconds since the epoch")
    until: float = Field(description="its end: when this was computed")
    limit: int = Field(description="the most served records read")
    read: int = Field(description="the served records read (all gateway answers, newest first)")
    truncated: bool = Field(
        description="limit records were read: the window may hold older ones, left out"
        " (the figures cover oldest_at on)"
    )
    oldest_at: float | None = Field(description="the oldest record read (null: none)")
    routed: int = Field(description="the routed answers weighed")
    direct: int = Field(
        description="answers not routed: of an agent the caller named (or stored before the"
        " savings fields)"
    )
    uncosted: int = Field(
        description="routed answers with no cost recorded (a stream whose end was not"
        " recorded: the process stopped first): left out"
    )


class _Judgment(BaseModel):
    """What the savings read of a judgment's skill evidence (its payload)."""

    model_config = ConfigDict(extra="ignore")

    score: float | None = None
    judge: str
    task_type: str


def judgment_keys(record: ServedRequest) -> tuple[str, str]:
    """The keys of the skill evidence of a gateway check of the answer and of its
    caller's feedback (``services/skill/evidence.py``'s ``judgment_evidence``)."""
    check = f"judgment:{record.agent_id}:{record.contract_id}"
    return check, f"{check}:feedback"


def _judged(event: SkillEvent | None, fleet: FleetSkill) -> Judged | None:
    """A judgment's score with its source's leniency at the task type (none: the fit has
    not seen the source, its prior: 0 and 0); None for a judgment without a score."""
    if event is None:
        return None
    found = _Judgment.model_validate(json.loads(event.payload))
    if found.score is None:
        return None
    source = judge_source(found.judge)
    state = fleet.sources.get(source)
    lenient, var = (0.0, 0.0) if state is None else state.at_type(found.task_type)[:2]
    return Judged(source, found.score, lenient, math.sqrt(max(var, 0.0)))


def _answer(
    record: ServedRequest, events: Mapping[str, SkillEvent], fleet: FleetSkill
) -> RoutedAnswer | None:
    """A routed record as the savings weigh it; None when it carries no cost or
    reference (stored before the fields, or a stream whose end was not recorded)."""
    cost, reference, skill = record.cost_usd, record.reference_agent, record.reference_skill
    if record.routed is None or cost is None or reference is None or skill is None:
        return None
    judged = (_judged(events.get(key), fleet) for key in judgment_keys(record))
    return RoutedAnswer(
        task_type=record.task_type, agent_id=record.agent_id, reference_agent=reference,
        cost_usd=cost, reference_cost_usd=record.reference_cost_usd or 0.0,
        reference_skill=skill, reference_sd=record.reference_sd or 0.0,
        quality_floor=record.quality_floor, classifier_usd=record.classifier_cost_usd or 0.0,
        judged=tuple(j for j in judged if j is not None),
    )  # fmt: skip


async def routing_savings(
    store: Store, *, now: float, window_s: float = DEFAULT_WINDOW_S, limit: int = DEFAULT_LIMIT,
    resamples: int = RESAMPLES, seed: int = 0,
) -> SavingsReport:  # fmt: skip
    """The savings of the routed gateway answers of the last ``window_s`` seconds (the
    newest ``limit`` served records at most); see the module."""
    since = now - window_s
    records = await store.list_served(since, limit)
    routed = [r for r in records if r.routed is not None]
    keys = [key for r in routed for key in judgment_keys(r)]
    events = await store.get_skill_events(keys) if keys else {}
    fleet = await store.get_fleet_skill()
    found, weighed = await off_loop(_weigh, routed, events, fleet, resamples, seed)
    return SavingsReport(
        **dict(found), since=since, until=now, limit=limit, read=len(records),
        truncated=len(records) >= limit, oldest_at=records[-1].at if records else None,
        routed=weighed, direct=len(records) - len(routed), uncosted=len(routed) - weighed,
    )  # fmt: skip


def _weigh(
    routed: list[ServedRequest], events: Mapping[str, SkillEvent], fleet: FleetSkill,
    resamples: int, seed: int,
) -> tuple[Savings, int]:  # fmt: skip
    """The savings of the routed records (newest first) and how many were weighed: CPU
    work, on a CPU thread."""
    weighed = [_answer(r, events, fleet) for r in reversed(routed)]  # oldest first
    answers = [a for a in weighed if a is not None]
    return savings(answers, resamples=resamples, seed=seed), len(answers)


class RecentSavings:
    """The default window's savings for the dashboard, computed at most once every
    ``max_age_s`` seconds and shared by every page that asks meanwhile: an open page
    refreshes every 2 s, and the figures read up to ``DEFAULT_LIMIT`` records and
    resample them (docs/dashboard.md)."""

    def __init__(
        self, max_age_s: float = PANEL_MAX_AGE_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_age_s = max_age_s
        self.clock = clock
        self._kept: tuple[float, SavingsReport] | None = None
        self._lock = asyncio.Lock()

    async def get(self, store: Store, now: float) -> SavingsReport:
        """The figures as of at most ``max_age_s`` ago (``now``: the window's end, when
        computed anew)."""
        async with self._lock:
            kept = self._kept
            if kept is not None and self.clock() - kept[0] < self.max_age_s:
                return kept[1]
            report = await routing_savings(store, now=now)
            self._kept = (self.clock(), report)
            return report
