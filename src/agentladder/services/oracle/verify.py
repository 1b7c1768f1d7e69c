"""``oracle verify``: rebuild every profile and skill state from the stored events and
compare with the store."""

from __future__ import annotations

from agentladder.domain.replay import ReplayStep, differences, replay
from agentladder.domain.rules import OracleRules
from agentladder.domain.skill.rules import SkillRules
from agentladder.services.oracle.models import VerifyReport
from agentladder.services.skill.replay import verify_skills
from agentladder.store.base import Store

__all__ = ["verify_store"]

LEDGER_PAGE = 10_000


async def verify_store(
    store: Store, rules: OracleRules, skill_rules: SkillRules | None = None
) -> VerifyReport:
    """Replay each agent's events with ``rules``; report each differing field per agent.
    Then replay the skill log with ``skill_rules`` and report each differing state.

    The ledger is compared line by line too (reported under ``ledger``). Replay uses the
    rules in force now: after the rule tables were changed, differences are expected.
    """
    found: dict[str, dict[str, tuple[object, object]]] = {}
    replayed = 0
    profiles = await store.list_profiles()
    for stored in profiles:
        events = await store.events(stored.id)
        replayed += len(events)
        steps = [ReplayStep(e.kind.value, e.payload, e.at) for e in events]
        rebuilt, lines = replay(stored.id, steps, rules)
        diff: dict[str, tuple[object, object]] = dict(differences(stored, rebuilt))
        ledger: list[tuple[str, int]] = []
        offset = 0
        while page := await store.ledger(stored.id, offset=offset, limit=LEDGER_PAGE):
            ledger.extend((e.event, e.xp_awarded) for e in page)
            offset += len(page)
        expected = [(line.event, line.xp) for line in lines]
        if ledger != expected:
            diff["ledger"] = (len(ledger), len(expected))
        if diff:
            found[stored.id] = diff
    skills = await verify_skills(store, skill_rules or SkillRules())
    return VerifyReport(
        agents_checked=len(profiles),
        events_replayed=replayed,
        differences=found,
        skill_agents_checked=skills.agents_checked,
        skill_events_replayed=skills.events_replayed,
        skill_differences=skills.differences,
        skill_rules_changed=skills.rules_changed,
        skill_fit_pending=skills.fit_pending,
    )
