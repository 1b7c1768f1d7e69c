"""Two orchestrator instances on one NATS server, deliberating among the same agents at once."""

from __future__ import annotations

import asyncio

from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import DeliberationRecord
from agentladder.store.url import open_store
from tests.services.world import simulated, world

AGENTS = {"a": 6.0, "b": 7.0, "c": 8.0, "d": 9.0}
PER_INSTANCE = 6


def test_two_instances_keep_every_promotion_and_counter(nats_store_url: str) -> None:
    """12 concurrent deliberations from 2 instances: wins, counters and ranks all add up."""

    async def main() -> None:
        stores = [await open_store(nats_store_url) for _ in range(2)]
        try:
            orchestrators = [await world(store, simulated(AGENTS)) for store in stores]
            request = DeliberationRequest(user_query="q", agent_names=list(AGENTS), scope="quick")

            async def many(index: int) -> list[DeliberationRecord]:
                orchestrator = orchestrators[index]
                records = await asyncio.gather(
                    *(orchestrator.run(request) for _ in range(PER_INSTANCE))
                )
                await orchestrator.settle()
                return list(records)

            batches = await asyncio.gather(many(0), many(1))
            records = [r for batch in batches for r in batch]
            assert len(records) == 2 * PER_INSTANCE
            stats = {agent: (await stores[0].get_stats(agent)) for agent in AGENTS}
            values = {agent: s.value for agent, s in stats.items() if s is not None}
            assert set(values) == set(AGENTS)
            total = 2 * PER_INSTANCE
            # every deliberation promotes exactly one agent (distinct qualities, noise 0)
            assert sum(v.wins for v in values.values()) == total
            assert sum(v.rank for v in values.values()) == total
            for value in values.values():
                assert value.deliberations_completed == total
                # per deliberation: 1 proposal + 3 evaluations, all succeed
                assert value.tasks_completed == total * 4
                assert value.tasks_failed == 0
            promoted = [p for r in records for p in r.ranking.promoted]
            assert len(promoted) == total
        finally:
            for store in stores:
                await store.close()

    asyncio.run(main())
