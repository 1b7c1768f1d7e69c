"""Bounds on task types, on every store (memory, SQLite, NATS): an agent judged in one
more than ``oracle.max_task_types_per_agent`` types, or a store asked to hold one more
than ``max_task_types``, is refused naming ``task_type``, and nothing of that judgment,
batch item or deliberation is stored; the rest of a batch is applied; replay agrees."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.config import Settings
from agentladder.domain.external import ExternalDeliberation
from agentladder.domain.rules import OracleRules
from agentladder.errors import TooManyTaskTypes
from agentladder.services.clock import FixedClock
from agentladder.services.container import build_services
from agentladder.services.oracle.batch import ItemStatus, submit_many
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.oracle.verify import verify_store
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store

RULES = OracleRules(max_task_types_per_agent=3, max_task_types=5)


def _judgment(agent: str, contract: str, task_type: str) -> JudgmentRequest:
    """A judgment of ``agent`` (new to the Oracle, as these tests' agents are)."""
    return JudgmentRequest(
        agent_id=agent, contract_id=contract, task_type=task_type, score=8.0, new_agent=True
    )


async def _snapshot(store: Store, agent: str) -> tuple[Any, ...]:
    profile = await store.get_profile(agent)
    skills = await store.get_skills([agent])
    return (
        None if profile is None else profile.value,
        [e.key for e in await store.events(agent)],
        len(await store.ledger(agent, limit=1000)),
        skills.get(agent),
    )


def test_an_agent_past_its_bound_is_refused_and_nothing_is_stored(with_store: Any) -> None:
    """Three task types for one agent pass, a fourth is TooManyTaskTypes naming task_type
    and the value; profile, events, ledger and skill unchanged; its known types still
    take judgments; the store lists the three."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES, clock=FixedClock(), skill=SkillService(store))
        for n in range(3):
            await oracle.submit_for_judgment(_judgment("a", f"c{n}", f"t{n}"))
        before = await _snapshot(store, "a")
        with pytest.raises(TooManyTaskTypes) as refused:
            await oracle.submit_for_judgment(_judgment("a", "c3", "t3"))
        assert refused.value.field == "task_type"
        assert refused.value.value == "t3"
        assert "oracle.max_task_types_per_agent" in str(refused.value)
        assert await _snapshot(store, "a") == before
        again = await oracle.submit_for_judgment(_judgment("a", "c4", "t1"))
        assert again.xp_awarded > 0
        assert await store.task_types() == frozenset({"t0", "t1", "t2"})
        assert (await verify_store(store, RULES)).ok

    with_store(body)


def test_a_store_past_its_bound_is_refused(with_store: Any) -> None:
    """Five task types in the store (over two agents) pass; a sixth, for an agent with room,
    is refused naming oracle.max_task_types, nothing stored; a known type still passes."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES, clock=FixedClock())
        for n, (agent, task_type) in enumerate(
            [("a", "t0"), ("a", "t1"), ("a", "t2"), ("b", "t3"), ("b", "t4")]
        ):
            await oracle.submit_for_judgment(_judgment(agent, f"c{n}", task_type))
        fresh = Oracle(store, RULES, clock=FixedClock())  # another instance, nothing cached
        for instance in (oracle, fresh):
            with pytest.raises(TooManyTaskTypes, match=r"oracle\.max_task_types\b"):
                await instance.submit_for_judgment(_judgment("c", "c9", "t5"))
        assert await store.get_profile("c") is None
        assert (await fresh.submit_for_judgment(_judgment("c", "c9", "t4"))).xp_awarded > 0
        assert len(await store.task_types()) == 5

    with_store(body)


def test_a_batch_refuses_only_the_items_past_a_bound(with_store: Any) -> None:
    """A batch naming six new types for one agent: the first three imported, the others
    refused naming task_type (the agent's bound), each in its place; a repeat of the batch
    finds the three applied and refuses the same three."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, RULES, clock=FixedClock(), skill=SkillService(store))
        items = [_judgment("a", f"c{n}", f"t{n}") for n in range(6)]
        outcomes = await submit_many(oracle, items)
        assert [o.status for o in outcomes] == [ItemStatus.IMPORTED] * 3 + [ItemStatus.REFUSED] * 3
        assert all(o.error is not None and o.error.startswith("task_type: ") for o in outcomes[3:])
        assert all(o.xp_awarded is not None and o.xp_awarded > 0 for o in outcomes[:3])
        profile = await store.get_profile("a")
        assert profile is not None
        assert sorted(profile.value.specializations) == ["t0", "t1", "t2"]
        repeat = await submit_many(oracle, items)
        assert [o.status for o in repeat] == [ItemStatus.DUPLICATE] * 3 + [ItemStatus.REFUSED] * 3
        assert [o.xp_awarded for o in repeat[:3]] == [o.xp_awarded for o in outcomes[:3]]
        assert (await verify_store(store, RULES)).ok

    with_store(body)


def test_a_deliberation_past_a_bound_is_refused_before_it_is_stored(store_url: str) -> None:
    """A deliberation reported in a task type that would be one too many for a participant
    is refused naming task_type and that agent; no record, ranking or judgment is stored;
    the same report in a type the agent has is accepted."""

    async def main() -> None:
        settings = Settings(oracle=RULES)
        services = await build_services(settings, store_url=store_url, clock=FixedClock())
        try:
            for n in range(3):
                await services.oracle.submit_for_judgment(_judgment("a", f"c{n}", f"t{n}"))
            rounds = [{"agents": {"a": {"aggregated_score": 8.0}, "b": {"aggregated_score": 6}}}]
            report = {"deliberation_id": "d1", "task_type": "t9", "rounds": rounds}
            with pytest.raises(TooManyTaskTypes, match="agent 'a'"):
                await services.orchestrator.report(ExternalDeliberation.model_validate(report))
            assert await services.store.get_deliberation("d1") is None
            assert await services.store.get_many_stats(["a", "b"]) == {}
            assert await services.store.get_profile("b") is None
            accepted = ExternalDeliberation.model_validate({**report, "task_type": "t1"})
            _, duplicate = await services.orchestrator.report(accepted)
            assert not duplicate
            await services.orchestrator.settle()
            assert await services.store.get_profile("b") is not None
        finally:
            await services.close()

    asyncio.run(main())


def test_a_deliberation_request_past_a_bound_is_refused_before_it_runs(store_url: str) -> None:
    """POST /deliberation's service (submit) and the command line's (run): a deliberation
    in a task type one too many for a named agent is refused naming that agent, and no
    record is stored; in a type the agent has, it is accepted."""
    from agentladder.config import parse_settings
    from agentladder.domain.deliberation import DeliberationRequest

    settings = parse_settings({
        "agents": [{"name": n, "backend": {"kind": "simulated", "quality": 7.0}}
                   for n in ("sim_a", "sim_b")],
        "oracle": RULES.model_dump(include={"max_task_types_per_agent", "max_task_types"}),
    })  # fmt: skip

    async def main() -> None:
        services = await build_services(settings, store_url=store_url, clock=FixedClock())
        try:
            for n in range(3):
                await services.oracle.submit_for_judgment(_judgment("sim_a", f"c{n}", f"t{n}"))
            asked = {"user_query": "q", "agent_names": ["sim_a", "sim_b"], "scope": "quick"}
            new = DeliberationRequest.model_validate({**asked, "task_type": "t9"})
            for attempt in (services.orchestrator.submit, services.orchestrator.run):
                with pytest.raises(TooManyTaskTypes, match="agent 'sim_a'"):
                    await attempt(new)
            assert list(await services.store.list_deliberations()) == []
            known = DeliberationRequest.model_validate({**asked, "task_type": "t1"})
            record = await services.orchestrator.run(known)
            assert record.status.value == "completed"
        finally:
            await services.orchestrator.settle()
            await services.close()

    asyncio.run(main())
