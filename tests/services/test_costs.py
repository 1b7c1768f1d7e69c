"""Who pays for what: every call charged to the agent that made it, at its own prices."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    charged_cost,
)
from agentladder.domain.rules import OracleRules
from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    Proposal,
    ProposeRequest,
    Usage,
)
from agentladder.services.oracle.verify import verify_store
from agentladder.store.base import Store
from agentladder.store.records import DeliberationDoc
from tests.services.world import simulated, world

PROPOSE = Usage(input_tokens=1000, output_tokens=500)
EVALUATE = Usage(input_tokens=2000, output_tokens=100)
PRICES = {"cheap": (1.0, 2.0), "dear": (10.0, 30.0), "mid": (3.0, 6.0)}


class Fixed:
    """An agent whose every call reports the same usage and whose score is fixed."""

    def __init__(self, score: float) -> None:
        self.score = score

    async def propose(self, request: ProposeRequest) -> Proposal:
        """The same answer, PROPOSE tokens."""
        return Proposal(content=f"answer {self.score}", usage=PROPOSE)

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        """The proposal's number as its score, EVALUATE tokens."""
        return Evaluation(score=float(request.proposal.split()[1]), usage=EVALUATE)

    async def aclose(self) -> None:
        """Nothing to release."""


def price(agent: str, usage: Usage) -> float:
    price_in, price_out = PRICES[agent]
    return (usage.input_tokens * price_in + usage.output_tokens * price_out) / 1_000_000


def test_each_agent_is_charged_its_own_calls_at_its_own_prices(with_store: Any) -> None:
    """Proposals and evaluations are priced at their caller's prices; totals add up; the
    Oracle's total_cost_incurred of each agent is what that agent spent."""

    async def body(store: Store) -> None:
        providers = {"cheap": Fixed(6.0), "dear": Fixed(8.0), "mid": Fixed(7.0)}
        orchestrator = await world(store, providers, prices=PRICES)
        request = DeliberationRequest(
            user_query="q", agent_names=tuple(providers), scope="standard"
        )
        record = await orchestrator.run(request)
        await orchestrator.settle()
        stored = await orchestrator.get(record.id)
        assert stored.cost_basis == 2
        for number in (0, 1):
            for proposal in stored.rounds[number].proposals:
                assert proposal.cost == pytest.approx(price(proposal.agent_id, PROPOSE))
                assert len(proposal.evaluations) == 2
                for evaluation in proposal.evaluations:
                    assert evaluation.cost == pytest.approx(price(evaluation.evaluator, EVALUATE))
        # 2 rounds: one proposal and two evaluations (one of each peer's proposal) each
        spent = {a: 2 * (price(a, PROPOSE) + 2 * price(a, EVALUATE)) for a in providers}
        assert stored.agent_costs == pytest.approx(spent)
        assert stored.total_cost == pytest.approx(sum(spent.values()))
        listed = (await orchestrator.list())[0]
        assert listed.total_cost == pytest.approx(sum(spent.values()))
        for agent, expected in spent.items():
            assert charged_cost(stored, agent) == pytest.approx(expected)
            profile = await orchestrator.oracle.get_profile(agent)
            assert profile.stats.total_cost_incurred == pytest.approx(expected)

    with_store(body)


def legacy_body() -> dict[str, Any]:
    """A record as stored before the costs were split: no cost_basis, no totals, and each
    proposal's cost holding its evaluations at the evaluators' prices."""
    return {
        "id": "old",
        "status": "completed",
        "agents": ["a", "b"],
        "created_at": 1.0,
        "rounds": [
            {
                "number": 1,
                "proposals": [
                    {"agent_id": "a", "content": "x", "aggregated_score": 7.0, "cost": 0.03,
                     "evaluations": [{"evaluator": "b", "score": 7.0}]},
                    {"agent_id": "b", "content": "y", "aggregated_score": 6.0, "cost": 0.05,
                     "evaluations": [{"evaluator": "a", "score": 6.0}]},
                ],
            }
        ],
    }  # fmt: skip


def test_a_record_stored_before_the_split_reads_as_it_was_judged() -> None:
    """An older record keeps its meaning: basis 1, its total the sum of its proposals'
    costs, no per-agent split, each agent charged its proposals' costs as before; it
    round-trips through the store's JSON unchanged."""
    record = DeliberationRecord.model_validate(legacy_body())
    assert record.cost_basis == 1
    assert record.total_cost == pytest.approx(0.08)
    assert record.agent_costs == {}
    assert charged_cost(record, "a") == pytest.approx(0.03)
    assert charged_cost(record, "b") == pytest.approx(0.05)
    again = DeliberationRecord.model_validate(record.model_dump(mode="json"))
    assert again == record


def test_an_older_record_left_settling_is_judged_as_it_was_written(with_store: Any) -> None:
    """A stored basis-1 record whose judgments were pending, resumed after the upgrade:
    each agent is charged its proposals' costs, as then; replay finds no difference."""

    async def body(store: Store) -> None:
        orchestrator = await world(store, simulated({"a": 7.0, "b": 6.0}))
        doc = DeliberationDoc(id="old", status="settling", created_at=1.0, body=legacy_body())
        await store.put_deliberation(doc)
        record = await orchestrator.get("old")
        assert orchestrator.resume(record)
        await orchestrator.settle()
        for agent, cost in (("a", 0.03), ("b", 0.05)):
            profile = await orchestrator.oracle.get_profile(agent)
            assert profile.stats.total_cost_incurred == pytest.approx(cost)
        stored = await orchestrator.get("old")
        assert stored.cost_basis == 1
        assert stored.total_cost == pytest.approx(0.08)
        report = await verify_store(store, OracleRules())
        assert report.ok, report.differences

    with_store(body)
