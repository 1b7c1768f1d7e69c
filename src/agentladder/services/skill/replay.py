"""Every skill state rebuilt from the stored log and compared with the store.

Part of ``agentladder oracle verify``: the states a store holds must be what the fit of
its log up to the last fit's end gives, with the events after it folded on by their
filter steps, in ``seq`` order. The fit uses floating-point linear algebra whose sums a
machine's BLAS may order differently, so estimates are compared within ``TOLERANCE``;
everything else (counts, times, the detector's sums, model changes) must be equal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.snapshot import Snapshot
from agentladder.domain.skill.state import AgentSkill, FleetSkill, replace
from agentladder.services.skill.fitting import events_after, fitted, folded, read_log
from agentladder.store.base import Store

__all__ = ["TOLERANCE", "SkillReport", "rebuild_skills", "verify_skills"]

TOLERANCE = 1e-6
"""How far (absolute, score points or their squares) a stored estimate may lie from the
rebuilt one."""


@dataclass
class SkillReport:
    """What the comparison found: events replayed, agents checked, what differs, and
    whether the states were fitted with other rules than the configured ones (then
    ``agentladder skill rebuild`` is needed)."""

    events_replayed: int = 0
    agents_checked: int = 0
    differences: list[str] = field(default_factory=list)
    rules_changed: bool = False
    fit_pending: int = 0


async def rebuild_skills(
    store: Store, rules: SkillRules, at: float | None = None
) -> tuple[Mapping[str, AgentSkill], FleetSkill, int]:
    """The states and the fleet's that the store's log gives, rebuilt as the store built
    them: the fit up to the last fit's end (the whole log when there was none, or when
    ``at`` asks for a new fit at that time), the rest folded on. And how many events."""
    fleet = await store.get_fleet_skill()
    done = fleet.fit
    if at is not None:
        whole = await read_log(store)
        snapshot = fitted(whole, rules, at)
        return snapshot.agents, snapshot.fleet, whole.events
    if done is None:  # never fitted: every event's filter step from nothing
        events = await events_after(store, 0)
        return folded(Snapshot({}, FleetSkill()), events, rules), FleetSkill(), len(events)
    upto = await read_log(store, upto=done.seq)
    snapshot = fitted(upto, rules, done.at)
    newer = await events_after(store, done.seq)
    return folded(snapshot, newer, rules), snapshot.fleet, upto.events + len(newer)


def close(a: Any, b: Any, tolerance: float = TOLERANCE) -> bool:
    """Equal, floats within ``tolerance`` (dataclasses, dicts, tuples walked through)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    if is_dataclass(a) and is_dataclass(b) and type(a) is type(b):
        return all(close(getattr(a, f.name), getattr(b, f.name), tolerance) for f in fields(a))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _unmarked(state: AgentSkill | None) -> AgentSkill | None:
    """The state without its mark of the fit it comes from (``fitting.stamped``): a
    store's bookkeeping (a state written before marks existed has none), not an estimate."""
    return None if state is None else replace(state, fit=0)


async def verify_skills(store: Store, rules: SkillRules) -> SkillReport:
    """Rebuild the states and compare every one with the stored one."""
    fleet = await store.get_fleet_skill()
    report = SkillReport()
    if fleet.fit is not None and fleet.fit.rules != rules.digest():
        report.rules_changed = True
        return report
    states, rebuilt_fleet, count = await rebuild_skills(store, rules)
    stored = {s.agent_id: s for s in await store.list_skills()}
    report.events_replayed = count
    report.agents_checked = len(stored)
    # read, not counted: verify is exact, and a NATS bucket of the previous format's count
    # can run over until a fit reads past its first event of this format
    report.fit_pending = len(await events_after(store, fleet.fit.seq)) if fleet.fit else count
    for agent in sorted(set(states) | set(stored)):
        if not close(_unmarked(states.get(agent)), _unmarked(stored.get(agent))):
            report.differences.append(agent)
    if fleet.fit is not None and not close(rebuilt_fleet, fleet):
        report.differences.append("(fleet)")
    return report
