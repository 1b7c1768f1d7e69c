"""NATS skill events of one agent as single compare-and-set publishes (no atomic batch):
the agent's state, carrying the event, then the event's log entry. A writer cut between
the two loses nothing acknowledged: whoever writes the state next (a retry, the agent's
next event, a fit's commit, an import's batch) or a store opened afterwards puts the event
in the log first, and replay equals the stored states."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

import nats
from agentladder.domain.skill import ScoreEvidence, SkillRules
from agentladder.domain.skill.evidence import DeliberationEvidence, Evaluation
from agentladder.domain.skill.state import AGENT_SKILL
from agentladder.errors import StoreUnavailable
from agentladder.services.clock import FixedClock
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.nats import batch
from agentladder.store.nats import skills as skills_module
from agentladder.store.nats.batch import BatchMessage
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.nats.skills import SkillKv
from agentladder.store.nats.store import NatsStore
from agentladder.store.skills import SkillEvent
from agentladder.store.url import open_store

NOW = 1_767_225_600.0  # 2026-01-01, the FixedClock's time


def _judgment(agent: str, contract: str, score: float) -> ScoreEvidence:
    key = f"judgment:{agent}:{contract}"
    return ScoreEvidence(key=key, at=NOW, agent_id=agent, task_type="t", score=score)


async def _keys(store: NatsStore) -> list[str]:
    return [event.key for event in await store.skill_events(limit=10_000)]


def test_a_judgment_of_one_agent_is_written_without_an_atomic_batch(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judgment (its key names its agent) opens no atomic batch: it is in the log with
    its stream sequence as seq, read back by key, and its agent's state carries it; a
    deliberation (several agents) is still one batch; replay equals the store."""
    batches: list[Sequence[BatchMessage]] = []
    plain = batch.publish_atomic

    async def counted(nc: Any, messages: Sequence[BatchMessage], **kwargs: Any) -> Any:
        batches.append(messages)
        return await plain(nc, messages, **kwargs)

    monkeypatch.setattr(skills_module, "publish_atomic", counted)

    async def main() -> None:
        store = await open_store(nats_store_url)
        assert isinstance(store, NatsStore)
        skill = SkillService(store, clock=FixedClock())
        try:
            applied = await skill.observe(_judgment("x", "c1", 7.0))
            assert applied.created
            assert batches == []
            assert await store.get_skill_event("judgment:x:c1") == applied.event
            assert (await store.skill_events()) == [applied.event]
            read = await store._skills.read(["x"])
            assert read.pending["x"].key == "judgment:x:c1"
            assert read.states["x"] == (await store.get_skills(["x"]))["x"]
            scores = (Evaluation(evaluator="y", author="x", round=1, score=8.0),
                      Evaluation(evaluator="x", author="y", round=1, score=4.0))  # fmt: skip
            both = DeliberationEvidence(
                key="deliberation:d1", at=NOW, task_type="t", agents=("x", "y"),
                evaluations=scores,
            )  # fmt: skip
            await skill.observe(both)
            assert len(batches) == 1
            assert (await store._skills.read(["x"])).pending == {}
            assert await _keys(store) == ["judgment:x:c1", "deliberation:d1"]
            assert (await verify_skills(store, skill.rules)).differences == []
        finally:
            await store.close()

    asyncio.run(main())


def _cut(store: NatsStore) -> None:
    """The store's next single event dies between its two publishes: its connection is
    closed once the state is committed, before the event's log entry."""
    kv: SkillKv = store._skills

    async def died(event: SkillEvent, data: bytes | None = None) -> SkillEvent:
        await kv.nc.close()
        raise StoreUnavailable("connection closed")

    kv.log_event = died  # type: ignore[method-assign]


@pytest.mark.parametrize("then", ["retry", "next", "fit", "import", "open"])
def test_a_writer_cut_between_its_two_publishes_loses_nothing(
    nats_store_url: str, then: str
) -> None:
    """Instance one applies judgments of x and y, then dies between the state and the log
    entry of one more judgment of x (the call fails: nothing acknowledged). The log lacks
    it while x's state carries it. Then instance two, open all along, sends the same
    judgment again (answered as applied before, with the same event), or applies another
    judgment of x (the cut one goes into the log first), or fits, or imports the cut one
    with another in one batch; or a store is opened afterwards (whose readers of the log
    wait for its repair, and whose next repair looks at no state). Every judgment is then
    in the log once, in order, and replay equals the stored states."""

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        assert isinstance(one, NatsStore)
        assert isinstance(two, NatsStore)
        first, second = SkillService(one, clock=FixedClock()), SkillService(two)
        try:
            acked = [
                (await first.observe(_judgment(a, f"c{i}", float(2 + i)))).event.key
                for i, a in enumerate(["x", "y", "x", "y"])
            ]
            cut = _judgment("x", "cut", 9.5)
            _cut(one)
            with pytest.raises(StoreUnavailable):
                await first.observe(cut)
            assert await _keys(two) == acked
            assert (await two._skills.read(["x"])).pending["x"].key == cut.key
            if then == "retry":
                again = await second.observe(cut)
                assert not again.created
                assert again.event.key == cut.key
                assert again.event.seq > 0
            elif then == "next":
                assert (await second.observe(_judgment("x", "after", 1.0))).created
            elif then == "fit":
                assert (await second.fit()).ran
            elif then == "import":
                applied = await second.observe_many([cut, _judgment("y", "more", 4.0)])
                assert [a.created for a in applied] == [False, True]
            else:  # its readers of the log wait for its repair at opening
                reader = await open_store(nats_store_url)
                assert isinstance(reader, NatsStore)
                two, reader = reader, two
                await reader.close()
            keys = await _keys(two)
            assert keys[: len(acked) + 1] == [*acked, cut.key]
            assert len(keys) == len(set(keys))
            seqs = [event.seq for event in await two.skill_events(limit=10_000)]
            assert seqs == sorted(set(seqs))
            assert (await verify_skills(two, SkillRules())).differences == []
            if then == "open":  # a repair looks only at states written since the last one
                assert await two._skills.repair() == 0
        finally:
            await two.close()
            await one.close()

    asyncio.run(main())


def test_an_agent_whose_state_a_fit_deleted_takes_new_evidence(nats_store_url: str) -> None:
    """A state that no event gave (written by an older version) is deleted by the next
    fit; a judgment of that agent afterwards is applied at once (its compare-and-set names
    the delete marker's revision, not 0), and replay equals the store."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        assert isinstance(store, NatsStore)
        skill = SkillService(store, clock=FixedClock())
        try:
            await skill.observe(_judgment("x", "c1", 6.0))
            orphan = (await store.get_skills(["x"]))["x"]
            options = parse_nats_url(nats_store_url)
            nc = await nats.connect(list(options.servers))
            try:
                kv = await nc.jetstream().key_value(options.skills_bucket)
                data = AGENT_SKILL.dump_json(orphan).replace(b'"x"', b'"ghost"', 1)
                await kv.put("a.ghost", data)
            finally:
                await nc.close()
            assert (await skill.fit(force=True)).ran
            assert "ghost" not in await store.get_skills(["ghost"])
            for key in ("judgment:ghost:1", "deliberation-ghost"):
                evidence = ScoreEvidence(key=key, at=NOW, agent_id="ghost", task_type="t")
                assert (await asyncio.wait_for(skill.observe(evidence), 30)).created
            assert (await verify_skills(store, skill.rules)).differences == []
            assert not store.conflicts.exhausted
        finally:
            await store.close()

    asyncio.run(main())
