"""Store contract, the gateway's pending checks: created once, replaced only at the
revision read, listed earliest first, deleted; two connections taking over one check:
exactly one wins."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentladder.errors import RevisionConflict
from agentladder.store.base import Store
from agentladder.store.checks import PendingCheck
from agentladder.store.url import open_store


def pending(contract: str, at: float, owner: str = "one", **extra: Any) -> PendingCheck:
    return PendingCheck(
        contract_id=contract, agent_id="alpha", task_type="audit",
        conversation="[user] Which controls matter? é", answer="answer from alpha", at=at,
        owner=owner, due=at, **extra,
    )  # fmt: skip


def test_a_pending_check_is_created_once_replaced_at_its_revision_and_deleted(
    with_store: Any,
) -> None:
    """A create of an existing check, or a replacement at another revision, is a
    ``RevisionConflict`` that changes nothing; the list is the earliest answered first
    and holds the last replacement; a delete forgets it (twice: no error), and the
    contract can be created again."""

    async def body(store: Store) -> None:
        assert await store.list_checks(10) == []
        first = await store.put_check(pending("gw-2", 2000.0), 0)
        other = await store.put_check(pending("gw-1", 1000.0), 0)
        with pytest.raises(RevisionConflict):
            await store.put_check(pending("gw-2", 2000.0, owner="two"), 0)
        retried = pending("gw-2", 2000.0, attempts=1, error="judge down", score=8.0)
        second = await store.put_check(retried, first)
        assert second != first
        with pytest.raises(RevisionConflict):
            await store.put_check(pending("gw-2", 2000.0, owner="two"), first)
        listed = await store.list_checks(10)
        assert [entry.value for entry in listed] == [pending("gw-1", 1000.0), retried]
        assert [entry.revision for entry in listed] == [other, second]
        assert [entry.value.contract_id for entry in await store.list_checks(1)] == ["gw-1"]
        await store.delete_check("gw-1")
        await store.delete_check("gw-1")
        assert [entry.value for entry in await store.list_checks(10)] == [retried]
        assert await store.put_check(pending("gw-1", 1000.0), 0) > 0

    with_store(body)


def test_two_connections_taking_over_one_check_one_wins(store_url: str) -> None:
    """Two stores on the same data (two instances) replace the same check at the revision
    both read, at the same time: one succeeds, the other gets ``RevisionConflict``, and
    the stored owner is the winner's."""

    async def main() -> None:
        first = await open_store(store_url)
        second = first if store_url == "memory://" else await open_store(store_url)
        try:
            revision = await first.put_check(pending("gw-x", 1000.0, owner="dead"), 0)

            async def take(store: Store, owner: str) -> str | None:
                try:
                    await store.put_check(pending("gw-x", 1000.0, owner=owner), revision)
                except RevisionConflict:
                    return None
                return owner

            won = await asyncio.gather(take(first, "one"), take(second, "two"))
            winners = [owner for owner in won if owner is not None]
            assert len(winners) == 1
            listed = await second.list_checks(10)
            assert [entry.value.owner for entry in listed] == winners
        finally:
            await first.close()
            if second is not first:
                await second.close()

    asyncio.run(main())
