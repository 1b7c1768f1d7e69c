"""NATS store URLs and names: defaults, refused options and ids, an unreachable server."""

from __future__ import annotations

import asyncio

import pytest

from agentladder.errors import InvalidInput, StoreUnavailable
from agentladder.natsserver import free_ports
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.records import DeliberationDoc
from agentladder.store.url import open_store


def test_default_names_are_the_specification_s() -> None:
    """Without options the bucket is nsed_agent_ranks and the prefix agentladder."""
    options = parse_nats_url("nats://user:secret@10.0.0.1:4222,10.0.0.2:4222")
    assert (options.rank_bucket, options.prefix, options.replicas) == (
        "nsed_agent_ranks", "agentladder", 1,
    )  # fmt: skip
    assert options.oracle_stream == "AGENTLADDER_ORACLE"
    assert options.servers == ("nats://user:secret@10.0.0.1:4222", "nats://10.0.0.2:4222")
    assert "secret" not in options.url


@pytest.mark.parametrize(
    "url",
    [
        "nats://127.0.0.1:4222?bucket=x",
        "nats://127.0.0.1:4222?replicas=0",
        "nats://127.0.0.1:4222?replicas=three",
        "nats://127.0.0.1:4222?prefix=a.b",
        "nats://127.0.0.1:4222?rank_bucket=has%20space",
        "nats://",
        "nats://127.0.0.1:4222/path",
    ],
)
def test_bad_nats_urls_are_refused(url: str) -> None:
    """Unknown options, bad replicas or names, no host: InvalidInput naming the store field."""
    with pytest.raises(InvalidInput) as caught:
        asyncio.run(open_store(url))
    assert caught.value.field == "store"


def test_unreachable_server_is_unavailable() -> None:
    """Opening a store where no server listens raises StoreUnavailable, quickly."""
    (port,) = free_ports(1)
    with pytest.raises(StoreUnavailable):
        asyncio.run(asyncio.wait_for(open_store(f"nats://127.0.0.1:{port}"), 10))


def test_deliberation_ids_must_be_kv_keys(nats_store_url: str) -> None:
    """An id that is not a valid KV key is refused naming deliberation_id; reading it is None."""

    async def main() -> None:
        store = await open_store(nats_store_url)
        try:
            doc = DeliberationDoc(id="has space", status="queued", created_at=1.0)
            with pytest.raises(InvalidInput) as caught:
                await store.put_deliberation(doc)
            assert caught.value.field == "deliberation_id"
            assert await store.get_deliberation("has space") is None
        finally:
            await store.close()

    asyncio.run(main())
