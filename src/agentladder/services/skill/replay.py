"""Every skill state rebuilt from the stored log, in order, and compared with the store.

Part of ``agentladder oracle verify``: the states a store holds must be exactly (to the
last bit) what folding its events in ``seq`` order gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FleetSkill
from agentladder.domain.skill.update import apply_evidence
from agentladder.services.skill.service import payload_of
from agentladder.store.base import Store

__all__ = ["SkillReport", "rebuild_skills", "verify_skills"]

PAGE = 10_000


@dataclass
class SkillReport:
    """What the comparison found: events replayed, agents checked, and what differs."""

    events_replayed: int = 0
    agents_checked: int = 0
    differences: list[str] = field(default_factory=list)


async def rebuild_skills(
    store: Store, rules: SkillRules
) -> tuple[dict[str, AgentSkill], FleetSkill, int]:
    """The states and the fleet's that the store's log gives, and how many events."""
    states: dict[str, AgentSkill] = {}
    fleet = FleetSkill()
    after = 0
    count = 0
    while page := await store.skill_events(after=after, limit=PAGE):
        for event in page:
            if event.seq != after + 1:
                raise ValueError(f"skill log: seq {event.seq} follows {after}")
            update = apply_evidence(states, fleet, payload_of(event), rules)
            states.update(update.agents)
            if update.fleet is not None:
                fleet = update.fleet
            after = event.seq
            count += 1
    return states, fleet, count


async def verify_skills(store: Store, rules: SkillRules) -> SkillReport:
    """Replay the log and compare every state with the stored one."""
    states, fleet, count = await rebuild_skills(store, rules)
    stored = {s.agent_id: s for s in await store.list_skills()}
    report = SkillReport(events_replayed=count, agents_checked=len(stored))
    for agent in sorted(set(states) | set(stored)):
        if states.get(agent) != stored.get(agent):
            report.differences.append(agent)
    if fleet != await store.get_fleet_skill():
        report.differences.append("(fleet)")
    return report
