"""A skill fit commits on NATS while evidence keeps coming: it holds nothing the writers
need (they never wait for it), it ends, and the states it leaves are the ones a replay
gives."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from agentladder.domain.skill.evidence import DeliberationEvidence, Evaluation, ScoreEvidence
from agentladder.services.clock import FixedClock
from agentladder.services.skill.fitting import STALE
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.nats import batch, skillfit
from agentladder.store.nats import skills as skills_module
from agentladder.store.nats.batch import BatchMessage
from agentladder.store.url import open_store

NOW = 1_767_225_600.0  # 2026-01-01, the FixedClock's time


@pytest.mark.parametrize("naming", [False, True], ids=["batches", "single-publishes"])
def test_a_fit_commits_while_writers_keep_writing(nats_store_url: str, naming: bool) -> None:
    """Four writers apply judgments to 12 agents without pause while three fits run: each
    fit commits (a chunk that loses its compare-and-set is written again in halves, an
    agent alone retried), no writer and no chunk gives up, and verify finds every state as
    the log gives it right after the writers stop, without another fit: evidence folded
    across a commit was written again by the commit's repairs (judgments whose keys do
    not name their agent are atomic batches; those whose keys do, single publishes)."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        skill = SkillService(store, clock=FixedClock())
        stop = asyncio.Event()
        written = [0]

        async def writer(w: int) -> None:
            i = 0
            while not stop.is_set():
                key = f"judgment:a{i % 12}:{w}-{i}" if naming else f"j-{w}-{i}"
                await skill.observe(
                    ScoreEvidence(key=key, at=NOW, agent_id=f"a{i % 12}",
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
            assert tally.attempts["skill_fit"] > 0, tally
            assert not tally.exhausted, tally
            checked = await verify_skills(store, skill.rules)
            assert checked.differences == []
            assert checked.fit_pending > 0
        finally:
            await store.close()

    asyncio.run(main())


@pytest.mark.parametrize("during", ["during", "judgment:a0:during"])
def test_evidence_applied_while_a_commit_is_between_its_writes_is_not_held_and_is_repaired(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch, during: str
) -> None:
    """A fit's commit paused right after its first batch of states: a judgment of an agent
    it has written is applied meanwhile, at once (with the head held by the commit it was
    refused until its 100 attempts ran out), folded from the new state and the previous
    fleet; once the commit ends, verify finds every state as the log gives it (the
    commit wrote that agent again). Both as a batch and as single publishes (a key naming
    the agent)."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        skill = SkillService(store, clock=FixedClock())
        try:
            for i in range(12):
                await skill.observe(_judgment(f"j-{i}", f"a{i % 3}", float(3 + i % 6)))
            await skill.fit()
            for i in range(12, 18):
                await skill.observe(_judgment(f"j-{i}", f"a{i % 3}", float(9 - i % 5)))
            written, release = asyncio.Event(), asyncio.Event()
            plain = batch.publish_atomic

            async def paused(nc: Any, messages: Sequence[BatchMessage], **kwargs: Any) -> Any:
                ack = await plain(nc, messages, **kwargs)
                states_only = all(".a." in m.subject for m in messages)  # no event: the fit's
                if states_only and not written.is_set():
                    written.set()
                    await release.wait()
                return ack

            monkeypatch.setattr(skills_module, "publish_atomic", paused)
            fit = asyncio.ensure_future(skill.fit(force=True))
            await asyncio.wait_for(written.wait(), 60)
            applied = await asyncio.wait_for(skill.observe(_judgment(during, "a0", 10.0)), 60)
            assert applied.created
            release.set()
            assert (await asyncio.wait_for(fit, 60)).ran
            checked = await verify_skills(store, skill.rules)
            assert checked.differences == []
            assert checked.fit_pending == 1
        finally:
            release.set()
            await store.close()

    asyncio.run(main())


def _judgment(key: str, agent: str, score: float) -> ScoreEvidence:
    return ScoreEvidence(key=key, at=NOW, agent_id=agent, task_type="t", score=score)


def test_evidence_folded_across_a_commit_is_written_again_before_it_ends(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fit's commit (chunks of one agent) paused right after writing a0, the first: a
    deliberation of a0 and a2 applied meanwhile reads a0 as the new fit left it and a2 as
    the previous fit did, and marks both states as folded across the commit; a2's chunk
    folds it on, and a0, written before it, is written again by the commit's repair, so
    verify finds every state as the log gives it (without the repair a0 differs)."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        skill = SkillService(store, clock=FixedClock())
        try:
            for i in range(12):
                await skill.observe(_judgment(f"j-{i}", f"a{i % 3}", float(3 + i % 6)))
            await skill.fit()
            await skill.observe(_judgment("j-late", "a1", 9.0))
            written, release = asyncio.Event(), asyncio.Event()
            plain = batch.publish_expected

            async def paused(nc: Any, message: BatchMessage, **kwargs: Any) -> Any:
                seq = await plain(nc, message, **kwargs)
                if message.subject.endswith(".a.a0") and not written.is_set():
                    written.set()
                    await release.wait()
                return seq

            monkeypatch.setattr(skillfit, "SKILL_CHUNK", 1)
            monkeypatch.setattr(skillfit, "publish_expected", paused)
            fit = asyncio.ensure_future(skill.fit(force=True))
            await asyncio.wait_for(written.wait(), 60)
            scores = (Evaluation(evaluator="a2", author="a0", round=1, score=9.5),
                      Evaluation(evaluator="a0", author="a2", round=1, score=2.5))  # fmt: skip
            crossing = DeliberationEvidence(
                key="deliberation:d1", at=NOW, task_type="t", agents=("a0", "a2"),
                evaluations=scores,
            )  # fmt: skip
            await asyncio.wait_for(skill.observe(crossing), 60)
            assert (await store.get_skills(["a0"]))["a0"].fit == STALE
            release.set()
            assert (await asyncio.wait_for(fit, 60)).ran
            states = await store.list_skills()
            fleet = await store.get_fleet_skill()
            assert fleet.fit is not None
            assert {s.fit for s in states} == {fleet.fit.seq}
            assert (await verify_skills(store, skill.rules)).differences == []
        finally:
            release.set()
            await store.close()

    asyncio.run(main())
