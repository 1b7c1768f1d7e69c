"""Which agents other instances' writes touched, as the NATS store's streams say it: one
ordered consumer per stream whose messages change what routing reads (the Oracle's
event subjects, the skills bucket's agent and fleet keys, the rank bucket, the
registrations bucket), delivering new messages only and their headers only (the subject
names the agent: the value is read again from the store when it is needed), except the
registrations', whose value (a heartbeat) is all there is to know.

``ChangeFeed.start(agents, everything, registration)`` calls ``agents([agent_id])`` for
each message on an agent's subject, ``registration(stored)`` for a registration, and
``everything()`` for one on the skills bucket's ``fleet`` key (a fit). A consumer that
the server resets (ordered consumers recreate themselves after a gap) may deliver a
message twice: reading an agent twice is harmless, and a registration older than the
one held is ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy

from agentladder.errors import CorruptRecord
from agentladder.store.codec import decode
from agentladder.store.nats.config import MARKER_PREFIX, NatsOptions
from agentladder.store.nats.io import is_deleted
from agentladder.store.records import Registration

__all__ = ["ChangeFeed"]

log = logging.getLogger(__name__)

_IDLE_HEARTBEAT = 2.0


class ChangeFeed:
    """The agents each new message of the store's streams concerns."""

    def __init__(self, js: JetStreamContext, options: NatsOptions) -> None:
        self._js = js
        self._options = options
        self._subs: list[JetStreamContext.PushSubscription] = []

    def _sources(self) -> list[tuple[str, str, str]]:
        """(stream, subject filter, the subject's prefix before the agent id)."""
        o = self._options
        skills = f"$KV.{o.skills_bucket}."
        ranks = f"$KV.{o.rank_bucket}."
        registrations = f"$KV.{o.registrations_bucket}."
        return [
            (o.oracle_stream, f"{o.event_prefix}>", o.event_prefix),
            (f"KV_{o.skills_bucket}", f"{skills}a.>", f"{skills}a."),
            (f"KV_{o.skills_bucket}", f"{skills}fleet", ""),
            (f"KV_{o.rank_bucket}", f"{ranks}>", ranks),
            (f"KV_{o.registrations_bucket}", f"{registrations}>", registrations),
        ]

    async def start(
        self,
        agents: Callable[[Collection[str]], None],
        everything: Callable[[], None],
        registration: Callable[[Registration], None],
    ) -> None:
        """Follow the streams from now on."""
        registrations = f"$KV.{self._options.registrations_bucket}."
        for stream, subject, prefix in self._sources():
            whole = prefix == registrations  # a heartbeat: the value says it all

            async def on_message(msg: Msg, prefix: str = prefix, whole: bool = whole) -> None:
                if not prefix:
                    everything()
                    return
                agent = msg.subject.removeprefix(prefix)
                if not agent or agent.startswith(MARKER_PREFIX):
                    return
                if whole and not is_deleted(msg):
                    try:
                        registration(decode(Registration, msg.data, msg.subject))
                        return
                    except CorruptRecord as error:
                        log.warning("change feed: %s", error)
                agents((agent,))

            sub = await self._js.subscribe(
                subject,
                stream=stream,
                cb=on_message,
                ordered_consumer=True,
                deliver_policy=DeliverPolicy.NEW,
                idle_heartbeat=_IDLE_HEARTBEAT,
                config=ConsumerConfig(headers_only=not whole),
            )
            self._subs.append(sub)

    async def stop(self) -> None:
        """Stop following."""
        subs, self._subs = self._subs, []
        for sub in subs:
            try:
                await sub.unsubscribe()
            except Exception:  # a closed connection: nothing more will arrive anyway
                log.debug("unsubscribing the change feed failed", exc_info=True)
