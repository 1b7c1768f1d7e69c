"""What the fault tests check in the store afterwards: every op applied exactly once."""

from __future__ import annotations

from agentladder.domain.rules import OracleRules
from agentladder.services.oracle.verify import verify_store
from agentladder.store.base import Store
from agentladder.store.records import OracleEventKind
from tests.faults.load import Expected

__all__ = ["check_store"]


async def check_store(store: Store, expected: Expected) -> dict[str, int]:
    """Assert the store holds exactly ``expected`` and that replaying each agent's events
    gives its stored profile; the figures checked."""
    events = 0
    unmarked = [d for d in sorted(expected.deliberations) if not await store.marker_applied(d)]
    assert not unmarked, f"deliberations never ranked: {unmarked}"
    for agent, keys in expected.events.items():
        found = [
            e.key.removeprefix("judgment:")
            for e in await store.events(agent)
            if e.kind is OracleEventKind.JUDGMENT
        ]
        assert len(found) == len(set(found)), f"{agent}: an event applied twice"
        assert set(found) == keys, (agent, sorted(set(found) ^ keys)[:10])
        events += len(found)
        profile = await store.get_profile(agent)
        if keys:
            assert profile is not None
            assert profile.value.stats.total_tasks == len(keys), agent
        stats = await store.get_stats(agent)
        completed = 0 if stats is None else stats.value.tasks_completed
        failed = 0 if stats is None else stats.value.tasks_failed
        wanted = (expected.completed[agent], expected.failed[agent])
        assert (completed, failed) == wanted, (agent, (completed, failed), "wanted", wanted)
    for identifier in expected.deliberations:
        doc = await store.get_deliberation(identifier)
        assert doc is not None, identifier
        assert doc.status == "completed", (identifier, doc.status)
    report = await verify_store(store, OracleRules())
    assert report.ok, (report.differences, report.skill_differences)
    return {"events": events, "deliberations": len(expected.deliberations)}
