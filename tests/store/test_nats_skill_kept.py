"""What a NATS store keeps between single-agent skill events, and why it stays exact.

The fleet's state: an event folds with the one this instance keeps, no request, only when
the agent's state carries an event folded with that very revision; else it reads the
fleet's state after the agent's. An instance whose kept fleet is older than the stored
one (another instance fitted meanwhile, or is committing a fit) still folds every event
as a replay of the log does. The agents' states: a value of the revision this instance
last wrote or decoded is not decoded again; one another instance wrote is.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.domain.skill import ScoreEvidence
from agentladder.services.clock import FixedClock
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.nats import batch, skillfit, skillpending
from agentladder.store.nats import skills as skills_module
from agentladder.store.nats.batch import BatchMessage
from agentladder.store.nats.skills import SkillKv
from agentladder.store.nats.store import NatsStore
from agentladder.store.url import open_store

NOW = 1_767_225_600.0  # 2026-01-01, the FixedClock's time


def _judgment(agent: str, contract: str, score: float, task_type: str = "t") -> ScoreEvidence:
    key = f"judgment:{agent}:{contract}"
    return ScoreEvidence(key=key, at=NOW, agent_id=agent, task_type=task_type, score=score)


async def _seed(skill: SkillService, tag: str, low: float) -> None:
    """Judgments of a0 to a2 at two task types (the fleet's levels come from them)."""
    for i in range(12):
        agent, task_type = f"a{i % 3}", f"t{i % 2}"
        score = low + (i % 5) if task_type == "t0" else 9.0 - (i % 4)
        await skill.observe(_judgment(agent, f"{tag}{i}", score, task_type))


def _kv(store: Any) -> SkillKv:
    assert isinstance(store, NatsStore)
    return store._skills


def test_a_judgment_reads_the_fleet_only_when_its_agents_state_names_another(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a fit, an agent's first judgment reads the fleet's state (the fit wrote the
    agent's state without naming a fleet); its next ones make no such request, as its
    state carries an event folded with the kept revision; the states verify."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        skill = SkillService(store, clock=FixedClock())
        reads: list[str] = []
        plain = SkillKv.get

        async def counted(self: SkillKv, key: str) -> tuple[bytes, int] | None:
            reads.append(key)
            return await plain(self, key)

        monkeypatch.setattr(SkillKv, "get", counted)
        try:
            await _seed(skill, "s", 2.0)
            await skill.fit()
            reads.clear()
            await skill.observe(_judgment("a0", "x1", 7.0))
            assert reads.count("fleet") == 1
            kept = _kv(store)._fleet
            assert kept is not None
            assert (await _kv(store).read(["a0"])).fleets == {"a0": kept[0]}
            reads.clear()
            for n in range(3):
                await skill.observe(_judgment("a0", f"y{n}", 3.0 + n))
            assert reads.count("fleet") == 0
            assert (await verify_skills(store, skill.rules)).differences == []
        finally:
            await store.close()

    asyncio.run(main())


def test_an_instance_that_kept_an_older_fleet_folds_with_the_stored_one(
    nats_store_url: str,
) -> None:
    """Instance two keeps the fleet of the first fit, and its agents' states carry it;
    instance one fits again on more evidence (another fleet). Instance two's next
    judgments fold with the new fleet, not the one it kept: verify finds every state as
    the log gives it (folded with the kept fleet, they differ)."""

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        fitter = SkillService(one, clock=FixedClock())
        writer = SkillService(two, clock=FixedClock())
        try:
            await _seed(fitter, "s", 1.0)
            await fitter.fit()
            for n in range(2):  # the first reads the fleet, the second uses the kept one
                for agent in ("a0", "a1", "a2"):
                    await writer.observe(_judgment(agent, f"w{n}", 6.0))
            kept = _kv(two)._fleet
            assert kept is not None
            await _seed(fitter, "u", 5.0)
            await fitter.fit()
            stored = await _kv(one).fleet_entry()
            assert stored[0] > kept[0]
            assert stored[1].levels != kept[1].levels
            assert _kv(two)._fleet == kept  # instance two has not looked since
            for agent in ("a0", "a1", "a2"):
                await writer.observe(_judgment(agent, "after", 8.0))
            assert (await verify_skills(one, fitter.rules)).differences == []
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())


def test_a_kept_fleet_older_than_a_commit_under_way_folds_as_replay_does(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Instance one's fit commit paused after its chunks and repairs, right before it
    writes the fleet's state whole: instance two, which kept the previous fit's fleet,
    applies a judgment to an agent the commit has written. It reads the fleet (the
    agent's state names none), folds with the new fit's, and verify finds every state as
    the log gives it once the commit ends (folded with the kept fleet, the commit's
    repairs, over by then, would leave that agent differing)."""

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        fitter = SkillService(one, clock=FixedClock())
        writer = SkillService(two, clock=FixedClock())
        try:
            await _seed(fitter, "s", 1.0)
            await fitter.fit()
            for n in range(2):
                for agent in ("a0", "a1", "a2"):
                    await writer.observe(_judgment(agent, f"w{n}", 6.0))
            await _seed(fitter, "u", 5.0)
            paused, release = asyncio.Event(), asyncio.Event()
            plain = batch.publish_expected

            async def pausing(nc: Any, message: BatchMessage, **kwargs: Any) -> Any:
                whole = message.subject.endswith(".fleet") and b'"rules":""' not in message.payload
                if whole and not paused.is_set():
                    paused.set()
                    await release.wait()
                return await plain(nc, message, **kwargs)

            monkeypatch.setattr(skillfit, "publish_expected", pausing)
            fit = asyncio.ensure_future(fitter.fit())
            await asyncio.wait_for(paused.wait(), 60)
            applied = await asyncio.wait_for(writer.observe(_judgment("a0", "late", 9.5)), 60)
            assert applied.created
            release.set()
            assert (await asyncio.wait_for(fit, 60)).ran
            assert (await verify_skills(one, fitter.rules)).differences == []
        finally:
            release.set()
            await one.close()
            await two.close()

    asyncio.run(main())


def test_a_state_this_instance_wrote_is_not_decoded_again_one_another_wrote_is(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two instances judge agent x in turn: an instance's judgment right after its own
    decodes no state (it knows the revision it wrote), one after the other instance's
    decodes the state that one wrote, folds on it, and every state verifies."""
    decoded: list[str] = []
    plain = skillpending.decode_entry

    def counted(data: bytes, key: str) -> Any:
        decoded.append(key)
        return plain(data, key)

    monkeypatch.setattr(skills_module, "decode_entry", counted)

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        first = SkillService(one, clock=FixedClock())
        second = SkillService(two, clock=FixedClock())
        try:
            await first.observe(_judgment("x", "c0", 4.0))
            for store in (one, two):  # their repairs at opening read every state
                await _kv(store).repairs.wait()
            decoded.clear()
            await first.observe(_judgment("x", "c1", 6.0))
            assert decoded == []
            await second.observe(_judgment("x", "c2", 8.0))
            assert len(decoded) == 1
            decoded.clear()
            await first.observe(_judgment("x", "c3", 2.0))
            assert len(decoded) == 1
            states = await _kv(one).read(["x"])
            assert states.states == (await _kv(two).read(["x"])).states
            assert states.states["x"].overall.n == 4
            assert (await verify_skills(one, first.rules)).differences == []
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())
