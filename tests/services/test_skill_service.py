"""The skill model fed by the service paths: deliberations run and reported, judgments,
verdicts, model changes; each piece of evidence counted once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import SideEffectState
from agentladder.domain.external import ExternalDeliberation
from agentladder.errors import PayloadConflict
from agentladder.services.clock import FixedClock
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService, payload_of
from agentladder.store.base import Store
from tests.services.world import simulated, world

QUALITIES = {"a": 6.0, "b": 8.5, "c": 4.0}


def ask(*agents: str) -> DeliberationRequest:
    return DeliberationRequest(
        user_query="Which clause is risky?", agent_names=agents, scope="standard",
        task_type="code_review",
    )  # fmt: skip


def test_a_deliberation_is_one_piece_of_evidence_with_every_peer_score(with_store: Any) -> None:
    """One deliberation: one skill event holding its 12 peer scores; the judgments the
    orchestrator derives from it add none; the board orders the agents by quality."""

    async def body(store: Store) -> None:
        clock = FixedClock()
        skill = SkillService(store, clock=clock)
        orchestrator = await world(store, simulated(QUALITIES), clock=clock, skill=skill)
        record = await orchestrator.run(ask("a", "b", "c"))
        await orchestrator.settle()
        stored = await orchestrator.get(record.id)
        assert stored.skill.state is SideEffectState.APPLIED
        assert stored.judgments.state is SideEffectState.APPLIED
        log = await store.skill_events()
        assert [e.kind for e in log] == ["deliberation"]
        evidence = payload_of(log[0])
        assert evidence.kind == "deliberation"
        assert len(evidence.evaluations) == 2 * 3 * 2  # rounds x authors x peers
        board = await skill.board("code_review")
        assert [e.agent_id for e in board] == ["b", "a", "c"]
        assert (await verify_skills(store, skill.rules)).differences == []

    with_store(body)


def test_a_judgment_counts_once_and_a_changed_one_conflicts(with_store: Any) -> None:
    """The same contract judged twice: one skill event; the Oracle already refuses another
    payload, so the skill log stays at one."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        orchestrator = await world(store, simulated(QUALITIES), skill=skill)
        request = JudgmentRequest(agent_id="a", contract_id="c-1", task_type="summarize", score=9)
        await orchestrator.oracle.submit_for_judgment(request)
        await orchestrator.oracle.submit_for_judgment(request)
        log = await store.skill_events()
        assert [(e.kind, e.key) for e in log] == [("judgment", "judgment:a:c-1")]
        with pytest.raises(PayloadConflict):
            await orchestrator.oracle.submit_for_judgment(request.model_copy(update={"score": 2}))
        assert len(await store.skill_events()) == 1
        typed = (await skill.of_agent("a")).task_types
        assert [e.task_type for e in typed] == ["summarize"]
        assert typed[0].skill > 5.0

    with_store(body)


def test_a_failed_verdict_is_evidence_once(with_store: Any) -> None:
    """record_validation twice with the same verdict: one verdict event, the skill lower."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        orchestrator = await world(store, simulated(QUALITIES), skill=skill)
        oracle = orchestrator.oracle
        await oracle.submit_for_judgment(
            JudgmentRequest(agent_id="a", contract_id="c-1", task_type="t", score=7)
        )
        judged = (await skill.of_agent("a")).task_types[0].skill
        sentinel = Sentinel(oracle, seed=1)
        await sentinel.record_validation("a", "c-1", passed=False)
        await sentinel.record_validation("a", "c-1", passed=False)
        kinds = [e.kind for e in await store.skill_events()]
        assert kinds == ["judgment", "verdict"]
        assert (await skill.of_agent("a")).task_types[0].skill < judged

    with_store(body)


def test_a_heartbeat_with_another_model_widens_the_estimate(with_store: Any) -> None:
    """An agent outside the config heartbeats another model_name: one model change event,
    a wider interval; the same heartbeat again changes nothing."""

    async def body(store: Store) -> None:
        clock = FixedClock()
        skill = SkillService(store, clock=clock)
        orchestrator = await world(store, simulated(QUALITIES), clock=clock, skill=skill)
        registry = orchestrator.registry
        await registry.heartbeat({"name": "z", "provider_id": "p", "model_name": "m1"})
        for n in range(5):
            await orchestrator.oracle.submit_for_judgment(
                JudgmentRequest(agent_id="z", contract_id=f"c{n}", task_type="t", score=8)
            )
        before = (await skill.of_agent("z")).overall
        beat = {"name": "z", "provider_id": "p", "model_name": "m2"}
        await registry.heartbeat(beat)
        await registry.heartbeat(beat)
        after = (await skill.of_agent("z")).overall
        kinds = [e.kind for e in await store.skill_events()]
        assert kinds == ["judgment"] * 5 + ["model_change"]
        assert after.sd > before.sd

    with_store(body)


def test_a_reported_deliberation_with_raw_scores_feeds_them_and_one_without_its_aggregates(
    with_store: Any,
) -> None:
    """POST /deliberations/results's evaluations become peer scores; without them, each
    proposal's aggregated score is the evidence."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        orchestrator = await world(store, simulated(QUALITIES), skill=skill)
        raw = ExternalDeliberation.model_validate({
            "deliberation_id": "ext-1", "task_type": "code_review",
            "rounds": [{"agents": {
                "a": {"aggregated_score": 6.0, "evaluations": {"b": 6.5, "c": 5.5}},
                "b": {"aggregated_score": 8.0, "evaluations": {"a": 8.0, "c": 8.0}},
                "c": {"aggregated_score": 4.0, "evaluations": {"a": 4.0, "b": 4.0}},
            }}],
        })  # fmt: skip
        plain = ExternalDeliberation.model_validate({
            "deliberation_id": "ext-2", "task_type": "code_review",
            "rounds": [
                {"agents": {"a": {"aggregated_score": 6.0}, "b": {"aggregated_score": 8.0}}}
            ],
        })  # fmt: skip
        await orchestrator.report(raw)
        await orchestrator.report(plain)
        await orchestrator.settle()
        # the two reports' side effects run at once: their events may come in either order
        events = {e.key: payload_of(e) for e in await store.skill_events()}
        assert set(events) == {"deliberation:ext-1", "deliberation:ext-2"}
        first, second = events["deliberation:ext-1"], events["deliberation:ext-2"]
        assert first.kind == second.kind == "deliberation"
        assert len(first.evaluations) == 6
        assert not first.aggregated
        assert not second.evaluations
        assert len(second.aggregated) == 2

    with_store(body)


class SlowFitCommit:
    """Wraps a store whose fit commits wait until ``release`` is set."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def commit_skill_fit(self, seq: int, fold: Any) -> None:
        self.started.set()
        await self.release.wait()
        await self.inner.commit_skill_fit(seq, fold)


def test_a_fit_cancelled_while_it_commits_still_commits_whole(with_store: Any) -> None:
    """A stop cancels the background fit while its commit is under way (on NATS: states in
    batches, then the fleet's): the commit runs to its end, ``settle`` waits for it, and
    verify finds the states the log gives (a commit cut in the middle left states no replay
    gives: verify flagged every agent after a stop under load)."""

    async def body(store: Store) -> None:
        slow = SlowFitCommit(store)
        skill = SkillService(slow)
        orchestrator = await world(store, simulated(QUALITIES), skill=SkillService(store))
        for i, agent in enumerate(("a", "b", "c")):
            await orchestrator.oracle.submit_for_judgment(
                JudgmentRequest(agent_id=agent, contract_id=f"c-{i}", task_type="t", score=3 + i)
            )
        fit = asyncio.ensure_future(skill.fit())
        await slow.started.wait()
        fit.cancel()
        with pytest.raises(asyncio.CancelledError):
            await fit
        slow.release.set()
        await skill.settle()
        fleet = await store.get_fleet_skill()
        assert fleet.fit is not None
        assert fleet.fit.seq == (await store.skill_events())[-1].seq
        report = await verify_skills(store, skill.rules)
        assert report.differences == []

    with_store(body)
