"""Loading the scale benchmark's NATS data: the same stamped histories, on the store's subjects.

Registrations and rank stats go through ``NatsStore``'s API. The Oracle's messages are
published with plain JetStream publishes on the store's own layout
(``docs/storage-nats.md``): per agent, its events in order on
``<prefix>.oracle.event.<agent>`` (``{"event": ..., "profile": profile after it}``) and
the idempotency claim of every event but the last on ``<prefix>.oracle.key.<agent>.<token>``,
exactly the messages ``apply_oracle`` leaves; only the compare-and-set headers, which the
readers never look at, are left out. Agents' n-th events go out together, so an agent's
events keep their order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence

from nats.aio.client import Client

import nats
from agentladder.store.nats.config import parse_nats_url
from agentladder.store.url import open_store
from benchmarks.scale_load import Template, agent_name, put_agents, stamped

__all__ = ["load_nats"]

_IN_FLIGHT = 2000


async def _publish_all(nc: Client, messages: list[tuple[str, bytes]]) -> None:
    js = nc.jetstream()
    for start in range(0, len(messages), _IN_FLIGHT):
        sends: list[Awaitable[object]] = [
            js.publish(subject, data, timeout=30.0)
            for subject, data in messages[start : start + _IN_FLIGHT]
        ]
        await asyncio.gather(*sends)


async def load_nats(url: str, templates: Sequence[Template], chosen: Sequence[int]) -> None:
    """Fill a fresh NATS store: agents through the store, the Oracle stream published."""
    store = await open_store(url)  # creates the buckets and the stream
    try:
        await put_agents(store, templates, chosen)
    finally:
        await store.close()
    options = parse_nats_url(url)
    nc = await nats.connect(list(options.servers))
    try:
        depth = max(len(templates[c].events) for c in chosen)
        for n in range(depth):
            messages: list[tuple[str, bytes]] = []
            for agent, c in enumerate(chosen):
                template, name = templates[c], agent_name(agent)
                if n >= len(template.events):
                    continue
                event = template.events[n]
                key, _, digest, _, _ = stamped(template, event, name)
                record = event.record.replace(template.name, name).replace(
                    event.payload_hash, digest
                )
                messages.append((options.event_subject(name), record.encode()))
                if n + 1 < len(template.events):  # the next event's commit wrote this claim
                    claim = event.claim.replace(template.name, name).replace(
                        event.payload_hash, digest
                    )
                    messages.append((options.claim_subject(name, key), claim.encode()))
            await _publish_all(nc, messages)
    finally:
        await nc.close()
