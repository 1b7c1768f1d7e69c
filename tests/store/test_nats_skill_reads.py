"""NATS skill states: a commit by another instance while one is between its read of a
state and its own commit can never leave a state folded from a stale base (each state is
written on the revision it was read at)."""

from __future__ import annotations

import asyncio

import pytest

from agentladder.domain.skill import ScoreEvidence, SkillRules
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.nats.skills import SkillKv
from agentladder.store.nats.store import NatsStore
from agentladder.store.url import open_store


@pytest.mark.parametrize("keys", [("j1", "j2"), ("judgment:x:1", "judgment:x:2")])
def test_another_instances_commit_during_the_reads_leaves_no_stale_state(
    nats_store_url: str, keys: tuple[str, str]
) -> None:
    """Instance one's read of the agent's state is held until instance two has committed a
    judgment of the same agent: one's compare-and-set on the state's revision fails, its
    judgment is folded again onto two's state, and the replay equals the store (keys that
    do not name the agent: atomic batches; keys that do: single publishes)."""
    first = ScoreEvidence(key=keys[0], at=1.0, agent_id="x", task_type="t", score=9.0)
    second = ScoreEvidence(key=keys[1], at=2.0, agent_id="x", task_type="t", score=2.0)

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        assert isinstance(one, NatsStore)
        kv: SkillKv = one._skills
        reached, done = asyncio.Event(), asyncio.Event()
        plain = kv._entry

        async def held(agent: str) -> tuple[bytes | None, int]:
            found = await plain(agent)
            if agent == "x" and not done.is_set():
                reached.set()
                await done.wait()
            return found

        kv._entry = held  # type: ignore[method-assign]
        try:
            task = asyncio.create_task(SkillService(one).observe(first))
            await asyncio.wait_for(reached.wait(), 10)
            await asyncio.sleep(0.3)  # whatever one reads beside the state is read by now
            await SkillService(two).observe(second)
            done.set()
            await asyncio.wait_for(task, 10)
            assert [e.key for e in await two.skill_events()] == [keys[1], keys[0]]
            assert one.conflicts.conflicts["skill"] == 1
            assert (await verify_skills(two, SkillRules())).differences == []
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())
