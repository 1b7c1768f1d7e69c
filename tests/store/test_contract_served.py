"""Store contract, the gateway's answered requests: kept by contract id, replaced, forgotten
after their time."""

from __future__ import annotations

from typing import Any

from agentladder.store.base import Store
from agentladder.store.nats.store import NatsStore
from agentladder.store.served import ServedRequest

DAY = 86_400.0


def served(contract: str, agent: str, at: float, caller: str = "team-a") -> ServedRequest:
    return ServedRequest(
        contract_id=contract, agent_id=agent, caller=caller, task_type="audit", at=at
    )


def test_answered_requests_are_kept_by_contract_and_replaced(with_store: Any) -> None:
    """A record is found by its contract id (an unknown id: None), a repeat replaces it,
    and a batch is kept whole."""

    async def body(store: Store) -> None:
        assert await store.get_served("gw-none") is None
        await store.put_served([], DAY)
        first = served("gw-1", "alpha", 1000.0)
        await store.put_served([first, served("gw-2", "beta", 1001.0, caller="team-b")], DAY)
        assert await store.get_served("gw-1") == first
        second = await store.get_served("gw-2")
        assert second is not None
        assert (second.agent_id, second.caller) == ("beta", "team-b")
        await store.put_served([served("gw-1", "gamma", 1002.0)], DAY)
        again = await store.get_served("gw-1")
        assert again is not None
        assert again.agent_id == "gamma"

    with_store(body)


def test_a_record_past_its_time_is_forgotten_where_the_store_prunes(with_store: Any) -> None:
    """On memory and SQLite a record older than ``keep_s`` before the newest written is
    forgotten at that write (NATS forgets by the bucket's time to live, in real time)."""

    async def body(store: Store) -> None:
        await store.put_served([served("gw-old", "alpha", 1000.0)], DAY)
        await store.put_served([served("gw-new", "alpha", 1000.0 + 2 * DAY)], DAY)
        assert await store.get_served("gw-new") is not None
        if not isinstance(store, NatsStore):
            assert await store.get_served("gw-old") is None

    with_store(body)
