"""NATS Oracle events apply once without batches: the claim protocol, step by step."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from nats.aio.client import Client

import agentladder.store.nats.oracle as nats_oracle
from agentladder.errors import AlreadyApplied
from agentladder.store.base import Store
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.nats.io import last_msg
from agentladder.store.nats.store import NatsStore
from agentladder.store.url import open_store
from tests.store.builders import judgment, judgment_commit
from tests.store.test_nats_store import run


async def claim_exists(nc: Client, url: str, agent: str, key: str) -> bool:
    """Whether the claim message of (agent, key) is in the Oracle stream."""
    options = parse_nats_url(url)
    try:
        await nc.jetstream().get_msg(
            options.oracle_stream, subject=options.claim_subject(agent, key)
        )
    except Exception:
        return False
    return True


def test_last_event_is_found_and_refused_again_before_its_claim_exists(nats_store_url: str) -> None:
    """The last event has no claim yet; get_event still finds it and a repeat is refused."""

    async def body(store: Store, nc: Client) -> None:
        first = judgment_commit(None, judgment("a1", "c-1"))
        revision = await store.commit_oracle(first, 0)
        assert not await claim_exists(nc, nats_store_url, "a1", "c-1")
        found = await store.get_event("a1", "c-1")
        assert found is not None
        assert found.key == "c-1"
        again = judgment_commit(first.profile, judgment("a1", "c-1"))
        with pytest.raises(AlreadyApplied) as refused:
            await store.commit_oracle(again, revision)
        assert getattr(refused.value.existing, "key", None) == "c-1"

    run(nats_store_url, body)


def test_the_next_commit_writes_the_previous_claim(nats_store_url: str) -> None:
    """Committing event n+1 first writes event n's claim, so a stale repeat of n is refused."""

    async def body(store: Store, nc: Client) -> None:
        first = judgment_commit(None, judgment("a1", "c-1"))
        revision = await store.commit_oracle(first, 0)
        second = judgment_commit(first.profile, judgment("a1", "c-2"))
        newer = await store.commit_oracle(second, revision)
        assert await claim_exists(nc, nats_store_url, "a1", "c-1")
        assert not await claim_exists(nc, nats_store_url, "a1", "c-2")
        repeat = judgment_commit(second.profile, judgment("a1", "c-1"))
        with pytest.raises(AlreadyApplied):
            await store.commit_oracle(repeat, newer)
        assert [e.key for e in await store.events("a1")] == ["c-1", "c-2"]

    run(nats_store_url, body)


def test_a_stale_head_never_applies_a_key_twice(nats_store_url: str) -> None:
    """Instance A folds from an old head; the key B applied last is still refused to A."""

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        try:

            def fold_for(contract: str) -> Any:
                return lambda profile: judgment_commit(profile, judgment("a1", contract))

            first = await one.apply_oracle("a1", "c-1", fold_for("c-1"))
            assert first is not None
            assert first.created
            by_two = await two.apply_oracle("a1", "c-2", fold_for("c-2"))
            assert by_two is not None
            assert by_two.created
            again = await one.apply_oracle("a1", "c-2", fold_for("c-2"))  # one's head is stale
            assert again is not None
            assert not again.created
            assert again.event.key == "c-2"
            third = await one.apply_oracle("a1", "c-3", fold_for("c-3"))
            assert third is not None
            assert third.created
            assert [e.key for e in await two.events("a1")] == ["c-1", "c-2", "c-3"]
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())


def test_a_lost_race_is_counted(nats_store_url: str) -> None:
    """Ten judgments of one agent at once: all fold from one head, one wins each round and
    the others' compare-and-sets are refused and retried; counted by operation for
    /metrics (agentladder_store_cas_*{op="oracle"}), each call ending with one attempt
    that went through."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        try:

            def fold_for(contract: str) -> Any:
                return lambda profile: judgment_commit(profile, judgment("a1", contract))

            keys = [f"c-{i}" for i in range(10)]
            done = await asyncio.gather(*(store.apply_oracle("a1", k, fold_for(k)) for k in keys))
            assert all(applied is not None and applied.created for applied in done)
            assert isinstance(store, NatsStore)
            tally = store.conflicts
            assert tally.conflicts["oracle"] >= 1
            assert tally.attempts["oracle"] - tally.conflicts["oracle"] == len(keys)
            assert not tally.exhausted
            assert sorted(e.key for e in await store.events("a1")) == sorted(keys)
        finally:
            await store.close()

    asyncio.run(main())


def test_an_event_followed_while_it_is_looked_up_is_still_found(
    nats_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judgment is the agent's last event (no claim) when get_event reads its claim;
    another instance commits the next event before get_event reads the last one: the
    judgment is still found (its claim was written by that commit), not reported
    missing (a verdict on it answered 404 under load)."""

    async def main() -> None:
        one, two = await open_store(nats_store_url), await open_store(nats_store_url)
        try:
            first = judgment_commit(None, judgment("a1", "c-1"))
            revision = await one.commit_oracle(first, 0)
            real = last_msg  # what the oracle module imported, put back after the lookup
            reads: list[str] = []

            async def interleaved(js: Any, stream: str, subject: str) -> Any:
                reads.append(subject)
                if len(reads) == 2:  # between the claim's read and the last event's
                    second = judgment_commit(first.profile, judgment("a1", "c-2"))
                    await two.commit_oracle(second, revision)
                return await real(js, stream, subject)

            monkeypatch.setattr(nats_oracle, "last_msg", interleaved)
            found = await one.get_event("a1", "c-1")
            monkeypatch.setattr(nats_oracle, "last_msg", real)
            assert found is not None
            assert found.key == "c-1"
            assert reads[1].endswith(".oracle.event.a1")
            assert reads[-1] == reads[0]  # the claim, read again
        finally:
            await one.close()
            await two.close()

    asyncio.run(main())
