"""Store contract, registry and deliberation records: insert, replace, list."""

from __future__ import annotations

from typing import Any

from agentladder.domain.agents import AgentConfig
from agentladder.store.base import Store
from agentladder.store.records import DeliberationDoc, Registration


def registration(name: str, last_seen: float, **fields: Any) -> Registration:
    return Registration(
        config=AgentConfig(name=name, **fields), first_seen=1.0, last_seen=last_seen
    )


def test_registrations_insert_replace_and_list(with_store: Any) -> None:
    """A registration is stored, replaced by a newer heartbeat, listed by agent id."""

    async def body(store: Store) -> None:
        assert await store.get_registration("a") is None
        await store.put_registration(registration("b", 5.0, capability_tags=("sql",)))
        await store.put_registration(registration("a", 5.0))
        await store.put_registration(registration("a", 9.0, model_name="gpt-4o"))
        got = await store.get_registration("a")
        assert got is not None
        assert got.last_seen == 9.0
        assert got.config.model_name == "gpt-4o"
        assert [r.agent_id for r in await store.list_registrations()] == ["a", "b"]
        b = await store.get_registration("b")
        assert b is not None
        assert b.config.capability_tags == ("sql",)
        await store.put_registration(
            registration("c", 1.0, capability_tags=("go", "sql"), provider_id="acme")
        )
        await store.put_registration(registration("d", 1.0, capability_tags=("sqlite",)))
        ids = [r.agent_id for r in await store.list_registrations(tag="sql")]
        assert ids == ["b", "c"]  # a whole tag, not a part of one
        assert [r.agent_id for r in await store.list_registrations(provider="acme")] == ["c"]
        assert [r.agent_id for r in await store.list_registrations(tag="go", provider="x")] == []
        assert await store.list_registrations(tag="nothing") == []

    with_store(body)


def test_deliberations_newest_first_with_paging(with_store: Any) -> None:
    """Deliberation records round-trip, replace by id, and list newest first in pages."""

    async def body(store: Store) -> None:
        for i in range(5):
            await store.put_deliberation(
                DeliberationDoc(id=f"d{i}", status="queued", created_at=float(i), body={"n": i})
            )
        await store.put_deliberation(
            DeliberationDoc(id="d2", status="completed", created_at=2.0, body={"result": [1, 2]})
        )
        got = await store.get_deliberation("d2")
        assert got is not None
        assert got.status == "completed"
        assert got.body == {"result": [1, 2]}
        assert await store.get_deliberation("nope") is None
        listed = await store.list_deliberations(limit=2)
        assert [d.id for d in listed] == ["d4", "d3"]
        assert [d.id for d in await store.list_deliberations(limit=10, offset=3)] == ["d1", "d0"]
        queued = await store.list_deliberations(statuses={"queued", "running"})
        assert [d.id for d in queued] == ["d4", "d3", "d1", "d0"]
        assert [d.id for d in await store.list_deliberations(statuses=["completed"])] == ["d2"]
        assert await store.list_deliberations(statuses=[]) == []

    with_store(body)


def test_an_agents_deliberations_newest_first_from_the_store(with_store: Any) -> None:
    """list_deliberations(agent=...) gives the records the agent took part in, newest
    first, in pages, with the status filter; a replaced record's agents replace its old
    ones; an agent of none gets none."""

    async def body(store: Store) -> None:
        for i in range(300):  # "a" in every 7th: far older than the newest 200
            agents = ["a", "b"] if i % 7 == 0 else ["b", "c"]
            status = "completed" if i % 2 else "failed"
            doc = DeliberationDoc(id=f"d{i:03}", status=status, created_at=float(i),
                                  body={"agents": agents})  # fmt: skip
            await store.put_deliberation(doc)
        mine = [d.id for d in await store.list_deliberations(agent="a", limit=1000)]
        assert mine == [f"d{i:03}" for i in range(294, -1, -7)]
        assert [d.id for d in await store.list_deliberations(agent="a", limit=2)] == [
            "d294", "d287"
        ]  # fmt: skip
        paged = await store.list_deliberations(agent="a", limit=2, offset=41)
        assert [d.id for d in paged] == ["d007", "d000"]
        done = await store.list_deliberations(agent="a", statuses=["completed"], limit=3)
        assert [d.id for d in done] == ["d287", "d273", "d259"]
        assert await store.list_deliberations(agent="a", statuses=[]) == []
        assert await store.list_deliberations(agent="nobody") == []
        doc = DeliberationDoc(id="d294", status="completed", created_at=294.0,
                              body={"agents": ["c", "d"]})  # fmt: skip
        await store.put_deliberation(doc)
        assert [d.id for d in await store.list_deliberations(agent="a", limit=1)] == ["d287"]
        assert [d.id for d in await store.list_deliberations(agent="d")] == ["d294"]

    with_store(body)


def test_ping_answers(with_store: Any) -> None:
    """A reachable store answers ping."""

    async def body(store: Store) -> None:
        await store.ping()

    with_store(body)


def test_leases_renewed_listed_while_running_and_dropped(with_store: Any) -> None:
    """A lease is live until its end, renewing moves the end, dropping ends it at once."""

    async def body(store: Store) -> None:
        assert await store.live_leases(100.0) == frozenset()
        await store.renew_lease("instance-a", 130.0)
        await store.renew_lease("instance-b", 110.0)
        assert await store.live_leases(100.0) == {"instance-a", "instance-b"}
        assert await store.live_leases(110.0) == {"instance-a"}  # ends are exclusive
        await store.renew_lease("instance-b", 160.0)
        assert await store.live_leases(140.0) == {"instance-b"}
        await store.drop_lease("instance-b")
        await store.drop_lease("never-held")  # nothing to drop is not an error
        assert await store.live_leases(100.0) == {"instance-a"}
        # a renewal far later forgets leases that ended more than an hour before
        await store.renew_lease("instance-c", 130.0 + 7200.0)
        assert await store.live_leases(0.0) == {"instance-c"}

    with_store(body)
