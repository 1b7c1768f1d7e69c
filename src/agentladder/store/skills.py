"""What the stores keep for the evidence model: one ordered log of skill events, the
state of each agent it touched, and the fleet's state.

The log is totally ordered by ``seq``: increasing in the order the events were applied,
from 1, with gaps allowed (memory and SQLite, one writer each, number the events 1, 2, ...;
on NATS an event's seq is its stream sequence, see ``store/nats/skills.py``). A reader
pages by the last seq it saw (``skill_events(after=...)``), never by counting. A
deliberation's evidence touches several agents at once; each event is applied with the
states it changes in one atomic unit, folded from the states the events before it that
touch the same agents left, so replaying the events in ``seq`` order rebuilds every state.
``apply_skill`` applies one event once per ``key``: a repeated key returns the stored event
and does not call the fold.

The states are the last fit's (over the log up to its ``seq``: the estimate depends on the
set of events, not their order), each moved since by the events that came after it
(``commit_skill_fit``: the fit's states replace all, with the events the log gained while
the fit ran folded onto them; memory and SQLite in one unit, NATS in chunks that hold no
event back and write again what an event moved meanwhile).

A state stored by the earlier filter-only model (before the fit) reads as absent
(``decode_state``): the log is what counts, and the next fit (``serve`` runs one within
``skill.fit_interval_s`` of its start; ``agentladder skill rebuild``) writes it anew.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.skill.state import AGENT_SKILL, AgentSkill, FleetSkill
from agentladder.errors import CorruptRecord
from agentladder.store.codec import decode_as

__all__ = [
    "FitFold",
    "SkillApplied",
    "SkillCommit",
    "SkillEvent",
    "SkillFitCommit",
    "SkillFold",
    "decode_state",
]

_LEGACY = "noise_shape"
"""A field only the filter-only model's evaluator state had (its noise's gamma shape)."""


def decode_state(data: str | bytes, key: str) -> AgentSkill | None:
    """An agent's stored state; None for one the filter-only model stored (a legacy
    format: absent until the next fit); anything else unreadable is ``CorruptRecord``."""
    try:
        return decode_as(AGENT_SKILL, data, key)
    except CorruptRecord:
        try:
            legacy = _LEGACY in json.loads(data).get("evaluator", {})
        except (ValueError, AttributeError):
            legacy = False
        if legacy:
            return None
        raise


class SkillEvent(BaseModel):
    """One applied piece of evidence: its JSON as given (what replay folds) and its hash."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = Field(
        default=0, ge=0, description="the log's order: increasing from 1, gaps allowed; the store's"
    )
    key: str
    kind: str
    payload: str
    payload_hash: str
    at: float


@dataclass(frozen=True, slots=True)
class SkillCommit:
    """One atomic write: the event, the new states of the agents it touched, and the
    fleet's new state (None: unchanged)."""

    event: SkillEvent
    agents: dict[str, AgentSkill]
    fleet: FleetSkill | None


SkillFold = Callable[[Mapping[str, AgentSkill], FleetSkill], SkillCommit]
"""Builds the commit of one skill event from the current states of the agents it names
(absent ones left out) and the fleet. Pure: it may run more than once."""


@dataclass(frozen=True, slots=True)
class SkillApplied:
    """The event stored under a key, and whether this call stored it."""

    event: SkillEvent
    created: bool


@dataclass(frozen=True, slots=True)
class SkillFitCommit:
    """A fit's result as the stores write it: every agent's state (made when asked for:
    ``domain/skill/snapshot.py``; a store writes them a group at a time) and the fleet's."""

    agents: Mapping[str, AgentSkill]
    fleet: FleetSkill


FitFold = Callable[[Sequence[SkillEvent]], SkillFitCommit]
"""Builds the states to write from a fit, given the events appended after the log's end
that the fit read (in ``seq`` order; usually none). Pure: it may run more than once, each
time with the events of the call before and maybe more after them."""
