"""Rank stats in the JetStream KV bucket ``<rank_bucket>`` (default ``nsed_agent_ranks``).

Key: the agent id. Value: the specification's ``AgentPerformanceStats`` JSON, readable
by any NATS client. Revision: the KV entry's revision (its stream sequence).

``commit_stats`` publishes ONE atomic batch to the bucket's stream ``KV_<rank_bucket>``:
the marker entry ``=applied=<token>`` (expected: absent) when a marker is given, then
one put per agent on ``$KV.<bucket>.<agent_id>`` with the expected last subject sequence
set to the revision the stats were computed from (0: absent). The server checks every
expectation at commit, under the stream's lock: all entries are stored or none, and a
marker can be stored once only. A lone agent without a marker is one plain
compare-and-set publish instead (atomic by itself, without the batch's store sync).
After the commit each agent's new stats are published on the core NATS subject
``<prefix>.ranks.updated.<agent_id>``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.domain.agents import validate_agent_name
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.errors import AlreadyApplied, InvalidInput, RevisionConflict
from agentladder.store.base import StatsUpdate
from agentladder.store.codec import decode
from agentladder.store.nats.batch import BatchGate, BatchMessage, publish_atomic, publish_expected
from agentladder.store.nats.config import MARKER_PREFIX, NatsOptions, kv_key_ok, marker_key
from agentladder.store.nats.io import REQUEST_TIMEOUT, is_deleted, scan
from agentladder.store.records import Versioned

__all__ = ["RankStats"]

log = logging.getLogger(__name__)


class RankStats:
    """The rank bucket: get, list and commit agents' stats."""

    def __init__(
        self, nc: Client, js: JetStreamContext, kv: KeyValue, options: NatsOptions
    ) -> None:
        self._nc = nc
        self._batches = BatchGate()  # its stream's atomic batches open at once
        self._js = js
        self._kv = kv
        self._options = options
        self._bucket = options.rank_bucket
        self._pre = f"$KV.{options.rank_bucket}."

    def _key(self, agent_id: str) -> str:
        """How a corrupt value is named: ``<bucket>/<agent_id>``."""
        return f"{self._bucket}/{agent_id}"

    async def get(self, agent_id: str) -> Versioned[AgentPerformanceStats] | None:
        """One agent's stats and revision, or None."""
        if not kv_key_ok(agent_id) or agent_id.startswith("="):
            return None
        try:
            entry = await self._kv.get(agent_id)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        stats = decode(AgentPerformanceStats, entry.value or b"", self._key(agent_id))
        return Versioned(stats, int(entry.revision or 0))

    async def list_all(self) -> dict[str, Versioned[AgentPerformanceStats]]:
        """Every agent's stats by agent id; marker entries (``=...``) are skipped."""
        messages = await scan(
            self._js, f"KV_{self._bucket}", f"{self._pre}>", last_per_subject=True
        )
        found: dict[str, Versioned[AgentPerformanceStats]] = {}
        for msg in messages:
            agent_id = msg.subject.removeprefix(self._pre)
            if agent_id.startswith("=") or is_deleted(msg):
                continue
            stats = decode(AgentPerformanceStats, msg.data, self._key(agent_id))
            found[agent_id] = Versioned(stats, msg.metadata.sequence.stream)
        return dict(sorted(found.items()))

    async def marker_applied(self, marker: str) -> bool:
        """Whether the marker's entry exists."""
        try:
            await self._kv.get(marker_key(marker))
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return False
        return True

    async def commit(
        self, updates: Mapping[str, StatsUpdate], marker: str | None
    ) -> dict[str, int]:
        """One atomic batch of compare-and-set puts (and the marker); the new revisions.

        A single put without a marker is published alone (atomic by itself, and without the
        store sync a batch commit costs).
        """
        messages: list[BatchMessage] = []
        if marker is not None:
            body = json.dumps({"marker": marker, "applied_at": time.time()}).encode()
            messages.append(BatchMessage(self._pre + marker_key(marker), body, 0))
        agents = list(updates)
        for agent_id, (stats, expected) in updates.items():
            validate_agent_name(agent_id, "agent_id")
            if isinstance(expected, bool) or not isinstance(expected, int) or expected < 0:
                raise InvalidInput("revision", expected, "must be an integer >= 0")
            payload = stats.model_dump_json().encode()
            messages.append(BatchMessage(self._pre + agent_id, payload, expected))
        if not messages:
            return {}
        try:
            if len(messages) == 1:  # one compare-and-set is atomic without a batch
                seq = await publish_expected(self._nc, messages[0], timeout=REQUEST_TIMEOUT)
                first = seq
            else:
                ack = await publish_atomic(
                    self._nc, messages, timeout=REQUEST_TIMEOUT, gate=self._batches
                )
                first = ack.seq - ack.count + 1 + (1 if marker is not None else 0)
        except RevisionConflict as conflict:
            key = conflict.key.removeprefix(self._pre)
            # Only a marker that is really there means "applied before": when the server's
            # error names no subject that changed (seen after a reconnect), the conflict
            # falls back to the first message, the marker, and must stay a conflict.
            if (
                marker is not None
                and key.startswith(MARKER_PREFIX)
                and await self.marker_applied(marker)
            ):
                raise AlreadyApplied(marker) from None
            log.warning("rank commit %s: conflict %s, retried", marker, conflict)
            raise RevisionConflict(key, conflict.expected, conflict.actual) from None
        revisions = {agent_id: first + index for index, agent_id in enumerate(agents)}
        await self._announce(updates)
        return revisions

    async def _announce(self, updates: Mapping[str, StatsUpdate]) -> None:
        """Publish the new stats; best effort: the commit stands whatever happens here."""
        try:
            for agent_id, (stats, _) in updates.items():
                subject = self._options.rank_update_subject(agent_id)
                await self._nc.publish(subject, stats.model_dump_json().encode())
        except (nats.errors.Error, OSError) as error:
            log.warning("rank update not published (the stats are stored): %r", error)
