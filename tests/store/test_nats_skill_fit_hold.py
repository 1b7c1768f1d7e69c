"""A skill fit commits on NATS while evidence keeps coming: the fit holds the head, so it
wins at once instead of losing every compare-and-set to the writers, and the states it
leaves are the ones a replay gives."""

from __future__ import annotations

import asyncio

from agentladder.domain.skill.evidence import ScoreEvidence
from agentladder.services.clock import FixedClock
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.url import open_store

NOW = 1_767_225_600.0  # 2026-01-01, the FixedClock's time


def test_a_fit_commits_while_writers_keep_writing(nats_store_url: str) -> None:
    """Four writers apply judgments without pause while three fits run: each fit commits
    after a few lost compare-and-sets at most (the race to hold the head is one round
    trip), where before every one of its 100 attempts lost (a commit writes states in
    batches before the head, longer than the gap between two events) and it gave up; no
    writer gives up, and verify finds every state as the log gives it."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        skill = SkillService(store, clock=FixedClock())
        stop = asyncio.Event()
        written = [0]

        async def writer(w: int) -> None:
            i = 0
            while not stop.is_set():
                await skill.observe(
                    ScoreEvidence(key=f"j-{w}-{i}", at=NOW, agent_id=f"a{i % 12}",
                                  task_type=f"t{i % 3}", score=float((i * 7 + w) % 11))
                )  # fmt: skip
                written[0] += 1
                i += 1

        try:
            writers = [asyncio.ensure_future(writer(w)) for w in range(4)]
            while written[0] < 100:
                await asyncio.sleep(0.01)
            for _ in range(3):
                report = await skill.fit(force=True)
                assert report.ran
            stop.set()
            await asyncio.gather(*writers)
            tally = store.conflicts  # type: ignore[attr-defined]
            assert tally.attempts["skill_fit"] - tally.conflicts["skill_fit"] == 3, tally
            assert tally.conflicts["skill_fit"] <= 30, tally
            assert not tally.exhausted, tally
            await skill.fit()
            checked = await verify_skills(store, skill.rules)
            assert checked.differences == []
        finally:
            await store.close()

    asyncio.run(main())
