"""Store contract, the gateway's answered requests: kept by contract id, replaced, forgotten
after their time; a routed answer's savings fields kept, a window listed newest first within
its bound, a record of an older server read; skill events read by key in one call."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from agentladder.domain.routing.spec import Strategy
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.nats.store import NatsStore
from agentladder.store.served import ServedRequest
from agentladder.store.url import open_store

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


def asked(contract: str, agent: str, at: float, request_id: str | None) -> ServedRequest:
    """A record of a request its caller sent with ``request_id`` (Inspect's ``x-irid``)."""
    return served(contract, agent, at).model_copy(update={"request_id": request_id})


def test_records_are_found_by_contract_or_by_the_callers_request_id(with_store: Any) -> None:
    """``find_served``: each id as a contract id or as the client request id a record was
    asked with; a request id answered twice (a retry): the newest answer; unknown ids,
    and a record asked without one, left out; a contract id wins over a request id; more
    ids than one query holds; none asked: none found."""

    async def body(store: Store) -> None:
        assert await store.find_served(["irid-1", "gw-1"]) == {}
        first = asked("gw-1", "alpha", 1000.0, "irid-1")
        retried = asked("gw-2", "beta", 1001.0, "irid-2")
        again = asked("gw-3", "gamma", 1002.0, "irid-2")
        plain = asked("gw-4", "alpha", 1003.0, None)
        odd = asked("gw-5", "beta", 1004.0, "gw-1")  # a caller's id that is a contract id
        await store.put_served([first, retried], DAY)
        await store.put_served([again, plain, odd], DAY)
        unknown = [f"irid-none-{n}" for n in range(900)]
        found = await store.find_served(["irid-1", "irid-2", "gw-4", *unknown, "irid-1"])
        assert found == {"irid-1": first, "irid-2": again, "gw-4": plain}
        assert (await store.find_served(["gw-1"]))["gw-1"] == first
        assert await store.find_served([]) == {}

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


def routed(contract: str, at: float) -> ServedRequest:
    """A routed answer with every savings field (docs/routing.md, "Does routing pay?")."""
    return ServedRequest(
        contract_id=contract, agent_id="cheap", caller="team-a", task_type="audit", at=at,
        routed=Strategy.CHEAPEST_ABOVE, cost_usd=0.000025, input_tokens=11, output_tokens=7,
        reference_agent="dear", reference_cost_usd=0.00025, reference_skill=8.4,
        reference_sd=0.31, quality_floor=7.5, classifier_cost_usd=0.0005,
    )  # fmt: skip


def test_a_routed_record_keeps_its_savings_fields(with_store: Any) -> None:
    """Strategy, cost, tokens, reference (its cost, skill, sd), floor and classifier's
    cost come back as written, by contract and in a window."""

    async def body(store: Store) -> None:
        record = routed("gw-r", 5000.0)
        await store.put_served([record, served("gw-d", "alpha", 5001.0)], DAY)
        assert await store.get_served("gw-r") == record
        listed = await store.list_served(4000.0, 10)
        assert [r.contract_id for r in listed] == ["gw-d", "gw-r"]
        assert listed[1] == record
        assert listed[0].routed is None
        assert listed[0].cost_usd is None

    with_store(body)


def test_a_window_is_read_newest_first_within_its_bound(with_store: Any) -> None:
    """Records answered at or after ``since``, newest first; with ``limit`` below the
    window's count, the newest ``limit``; a store that kept nothing yet: none. (Each
    record written in its own batch, as the gateway writes a second's at a time: NATS
    reads the stream's last writes.)"""

    async def body(store: Store) -> None:
        assert await store.list_served(0.0, 10) == []
        for n in range(1, 6):
            await store.put_served([served(f"gw-{n}", "alpha", 1000.0 * n)], DAY)
        window = await store.list_served(2500.0, 10)
        assert [r.contract_id for r in window] == ["gw-5", "gw-4", "gw-3"]
        newest = await store.list_served(0.0, 2)
        assert [r.contract_id for r in newest] == ["gw-5", "gw-4"]
        assert [r.contract_id for r in await store.list_served(1000.0, 1)] == ["gw-5"]
        assert await store.list_served(5000.5, 10) == []

    with_store(body)


def test_skill_events_are_read_by_key_in_one_call(with_store: Any) -> None:
    """``get_skill_events``: those of the keys that have an event, each as
    ``get_skill_event`` reads it; unknown keys left out; more keys than one query holds."""

    async def body(store: Store) -> None:
        skill = SkillService(store)
        for n in range(3):
            evidence = judgment_evidence("alpha", f"gw-{n}", "audit", 6.0 + n, True, 1000.0 + n)
            await skill.observe(evidence)
        keys = [f"judgment:alpha:gw-{n}" for n in range(3)]
        unknown = [f"judgment:alpha:gw-none-{n}" for n in range(700)]
        found = await store.get_skill_events([*keys, *unknown, keys[0]])
        assert sorted(found) == keys
        for key in keys:
            assert found[key] == await store.get_skill_event(key)
        assert json.loads(found[keys[2]].payload)["score"] == 8.0
        assert await store.get_skill_events([]) == {}

    with_store(body)


OLD_RECORD = (
    '{"contract_id": "gw-old", "agent_id": "alpha", "caller": "team-a",'
    ' "task_type": "audit", "at": 1000.0}'
)
"""A record as the gateway stored it before the savings fields."""


def test_a_record_stored_before_the_savings_fields_reads_with_them_null(
    tmp_path: Path, nats_store_url: str
) -> None:
    """The JSON of an older server, in SQLite's row and NATS's bucket as it wrote them,
    reads with every new field null, by contract and in a window."""

    async def check(store: Store) -> None:
        old = await store.get_served("gw-old")
        assert old is not None
        assert (old.agent_id, old.routed, old.cost_usd, old.reference_agent) == (
            "alpha", None, None, None,
        )  # fmt: skip
        assert await store.list_served(0.0, 5) == [old]

    async def main() -> None:
        path = tmp_path / "old.db"
        sqlite = await open_store(f"sqlite:///{path}")
        try:
            await sqlite.put_served([served("gw-new", "alpha", 1000.0)], DAY)  # the table
            with sqlite3.connect(path) as conn:
                conn.execute("DELETE FROM gateway_served")
                conn.execute(
                    "INSERT INTO gateway_served (contract_id, at, doc) VALUES (?,?,?)",
                    ("gw-old", 1000.0, OLD_RECORD),
                )
            await check(sqlite)
        finally:
            await sqlite.close()
        nats = await open_store(nats_store_url)
        try:
            assert isinstance(nats, NatsStore)
            await nats.put_served([served("gw-old", "alpha", 1000.0)], DAY)  # the bucket
            kv = await nats._js.key_value(nats.options.prefix + "_served")
            await kv.put("gw-old", OLD_RECORD.encode())
            await check(nats)
        finally:
            await nats.close()

    asyncio.run(main())
