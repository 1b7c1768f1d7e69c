"""The skill queue on NATS: stream ``<PREFIX>_SKILLQ`` and the appliers' leases.

- **The stream**: subjects ``<prefix>.skillq.<shard>``, file storage, work-queue
  retention (an evidence acked by its applier is removed, so the stream holds exactly the
  evidence not applied yet), bounded by ``max_msgs`` and ``max_bytes`` with ``discard:
  new`` (a full queue refuses the publish: ``SkillQueueFull``), each message's
  ``Nats-Msg-Id`` the SHA-256 token of the evidence's key (a re-publish within the
  duplicate window, two minutes, is dropped by the server).
- **A durable pull consumer per shard** (``applier_<shard>``, explicit acks, an ack
  overdue after the shard's lease time is delivered again).
- **Leases**: KV bucket ``<prefix>_appliers``: ``shard.<n>`` holds ``{"holder", "until"}``,
  taken by compare-and-set on its revision (created when absent, replaced when ended or
  held by the same holder); ``present.<holder>`` holds the time until which an instance
  runs appliers (how many instances share the shards); one that ended more than an hour
  before is purged by the next instance to count them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.kv import KeyValue

from agentladder.errors import SkillQueueFull, StoreError
from agentladder.store.base import LEASE_KEPT_S
from agentladder.store.nats.config import NatsOptions, QueueOptions, claim_token, nats_errors
from agentladder.store.nats.io import REQUEST_TIMEOUT, STREAM_NAME_IN_USE
from agentladder.store.skillqueue import Queued, QueueState, shard_of

__all__ = ["NatsSkillQueue", "ensure_queue_stream"]

_FULL = ("maximum messages exceeded", "maximum bytes exceeded")
"""How nats-server words a publish refused by ``discard: new`` at the stream's bound."""
DUPLICATE_WINDOW_S = 120.0
RETRY_AFTER_S = 2.0
"""The ``Retry-After`` of a judgment refused because the queue is full."""


async def ensure_queue_stream(js: JetStreamContext, options: NatsOptions) -> None:
    """Create the queue's stream, or bind to it and bring its bounds to the options'."""
    queue = options.skill_queue
    assert queue is not None
    config = StreamConfig(
        name=options.skill_queue_stream,
        description="agentladder skill evidence awaiting its shard's applier",
        subjects=[f"{options.prefix}.skillq.*"],
        retention=RetentionPolicy.WORK_QUEUE,
        storage=StorageType.FILE,
        num_replicas=options.replicas,
        max_msgs=queue.max_msgs,
        max_bytes=queue.max_bytes,
        discard=DiscardPolicy.NEW,
        duplicate_window=DUPLICATE_WINDOW_S,
    )
    try:
        await js.add_stream(config)
        return
    except nats.js.errors.APIError as error:
        if error.err_code != STREAM_NAME_IN_USE:
            raise
    info = await js.stream_info(config.name or "")
    if info.config.max_msgs != queue.max_msgs or info.config.max_bytes != queue.max_bytes:
        await js.update_stream(config)


def _parse_ts(text: str) -> float | None:
    """An RFC 3339 time of nats-server (nanoseconds allowed) in seconds; None for its zero."""
    if text.startswith("0001-"):
        return None
    head, _, rest = text.rstrip("Z").partition(".")
    fraction = float(f"0.{rest}") if rest else 0.0
    return datetime.fromisoformat(head).replace(tzinfo=UTC).timestamp() + fraction


class NatsSkillQueue:
    """``SkillQueue`` (``store/skillqueue.py``) on one stream and one KV bucket."""

    def __init__(
        self, nc: Client, js: JetStreamContext, options: NatsOptions, leases: KeyValue
    ) -> None:
        assert options.skill_queue is not None
        self._nc = nc
        self._js = js
        self._options = options
        self._queue: QueueOptions = options.skill_queue
        self._leases = leases
        self._stream = options.skill_queue_stream
        self._pulls: dict[int, JetStreamContext.PullSubscription] = {}
        self._refused = 0

    @property
    def shards(self) -> int:
        """How many shards."""
        return self._queue.shards

    @property
    def lease_s(self) -> float:
        """A shard's lease time (also its consumer's ack wait)."""
        return self._queue.lease_s

    @property
    def refused(self) -> int:
        """Publishes refused because the stream was full."""
        return self._refused

    async def enqueue(self, key: str, agent_id: str, data: bytes) -> int:
        """One publish, acked by the server once stored (on every replica's quorum); 0 for
        a publish the server dropped as a duplicate (its ack names the first one's place,
        which must not be withdrawn)."""
        with nats_errors("skill queue enqueue", self._nc):
            subject = self._options.skill_queue_subject(shard_of(agent_id, self.shards))
            try:
                ack = await self._js.publish(
                    subject,
                    data,
                    timeout=REQUEST_TIMEOUT,
                    headers={"Nats-Msg-Id": claim_token(key)},
                )
            except nats.js.errors.APIError as error:
                if any(text in (error.description or "") for text in _FULL):
                    self._refused += 1
                    raise SkillQueueFull(
                        "the skill queue is full: the judgment was not stored; retry later",
                        RETRY_AFTER_S,
                    ) from error
                raise
            return 0 if ack.duplicate else int(ack.seq)

    async def withdraw(self, position: int) -> None:
        """Delete the message (already applied and acked: nothing to do)."""
        with (
            nats_errors("skill queue withdraw", self._nc),
            contextlib.suppress(nats.js.errors.NotFoundError, nats.js.errors.APIError),
        ):
            await self._js.delete_msg(self._stream, position)

    async def state(self) -> QueueState:
        """One request: the stream's info (its message count and first message's time)."""
        with nats_errors("skill queue state", self._nc):
            reply = await self._nc.request(
                f"$JS.API.STREAM.INFO.{self._stream}", b"", timeout=REQUEST_TIMEOUT
            )
            body = json.loads(reply.data)
            if "error" in body:
                error = body["error"]
                raise StoreError(f"NATS skill queue: JetStream error {error.get('err_code')}")
            state = body.get("state", {})
            depth = int(state.get("messages", 0))
            oldest = _parse_ts(str(state.get("first_ts", "0001-"))) if depth else None
            return QueueState(depth, oldest)

    async def _lease(self, key: str) -> tuple[dict[str, object] | None, int]:
        try:
            entry = await self._leases.get(key)
        except nats.js.errors.KeyNotFoundError:
            return None, 0
        if entry.value is None:
            return None, int(entry.revision or 0)
        with contextlib.suppress(ValueError):
            value = json.loads(entry.value)
            if isinstance(value, dict):
                return value, int(entry.revision or 0)
        return None, int(entry.revision or 0)

    async def _put(self, key: str, value: dict[str, object], revision: int) -> bool:
        data = json.dumps(value).encode()
        try:
            if revision == 0:
                await self._leases.create(key, data)
            else:
                await self._leases.update(key, data, last=revision)
        except (nats.js.errors.KeyWrongLastSequenceError, nats.js.errors.KeyDeletedError):
            return False
        except nats.js.errors.APIError as error:
            if error.err_code == 10071:  # wrong last sequence
                return False
            raise
        return True

    async def present(self, holder: str, until: float, now: float) -> int:
        """Put ``present.<holder>``; count those running past ``now``."""
        with nats_errors("skill queue present", self._nc):
            await self._leases.put(f"present.{holder}", json.dumps({"until": until}).encode())
            count = 0
            keys: list[str] = []
            with contextlib.suppress(nats.js.errors.NoKeysError):
                keys = await self._leases.keys()
            for key in keys:
                if key.startswith("present."):
                    value, _ = await self._lease(key)
                    ends = 0.0 if value is None else float(str(value.get("until", 0)))
                    if ends > now:
                        count += 1
                    elif ends < now - LEASE_KEPT_S:  # an instance long gone: forgotten
                        with contextlib.suppress(nats.js.errors.KeyNotFoundError):
                            await self._leases.purge(key)
            return max(1, count)

    async def absent(self, holder: str) -> None:
        """Purge ``present.<holder>``."""
        with (
            nats_errors("skill queue absent", self._nc),
            contextlib.suppress(nats.js.errors.KeyNotFoundError),
        ):
            await self._leases.purge(f"present.{holder}")

    async def take(self, shard: int, holder: str, until: float, now: float) -> bool:
        """Compare-and-set ``shard.<n>`` when absent, ended, or ``holder``'s."""
        with nats_errors("skill queue take", self._nc):
            key = f"shard.{shard}"
            value, revision = await self._lease(key)
            held = value is not None and value.get("holder") != holder
            if held and value is not None and float(str(value.get("until", 0))) > now:
                return False
            return await self._put(key, {"holder": holder, "until": until}, revision)

    async def release(self, shard: int, holder: str) -> None:
        """Mark the lease ended, compare-and-set (another holder's is left alone)."""
        with nats_errors("skill queue release", self._nc):
            key = f"shard.{shard}"
            value, revision = await self._lease(key)
            if value is not None and value.get("holder") == holder:
                await self._put(key, {"holder": holder, "until": 0}, revision)

    async def holders(self, now: float) -> dict[int, str]:
        """Each shard's live holder."""
        with nats_errors("skill queue holders", self._nc):
            found: dict[int, str] = {}
            for shard in range(self.shards):
                value, _ = await self._lease(f"shard.{shard}")
                if value is not None and float(str(value.get("until", 0))) > now:
                    found[shard] = str(value.get("holder"))
            return found

    async def _subscription(self, shard: int) -> JetStreamContext.PullSubscription:
        found = self._pulls.get(shard)
        if found is None:
            subject = self._options.skill_queue_subject(shard)
            config = ConsumerConfig(
                durable_name=f"applier_{shard}",
                ack_policy=AckPolicy.EXPLICIT,
                deliver_policy=DeliverPolicy.ALL,
                ack_wait=self.lease_s,
                max_ack_pending=10_000,
                filter_subject=subject,
            )
            found = await self._js.pull_subscribe(
                subject, durable=f"applier_{shard}", stream=self._stream, config=config
            )
            self._pulls[shard] = found
        return found

    async def pull(self, shard: int, limit: int, wait_s: float) -> list[Queued]:
        """A fetch of the shard's durable consumer (none within ``wait_s``: empty)."""
        with nats_errors("skill queue pull", self._nc):
            subscription = await self._subscription(shard)
            try:
                messages = await subscription.fetch(limit, timeout=wait_s)
            except TimeoutError:  # nats-py's and asyncio's alike
                return []
            return [Queued(m.data, m.metadata.timestamp.timestamp(), _acker(m)) for m in messages]

    async def close(self) -> None:
        """Unsubscribe the pulls (the durable consumers stay)."""
        for subscription in self._pulls.values():
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
        self._pulls.clear()


def _acker(message: Msg) -> Callable[[], Awaitable[None]]:
    async def ack() -> None:
        await message.ack()

    return ack
