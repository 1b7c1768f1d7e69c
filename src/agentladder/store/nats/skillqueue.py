"""The skill queue on NATS: the Oracle's own stream, read by one durable consumer.

A judgment's award is the queue entry: its event message on ``<prefix>.oracle.event.<agent>``
(``store/nats/oracle.py``) carries the judgment's skill evidence in the header
``Agentladder-Skill`` (its JSON), written by the same publish that stores the award. So
the request path writes nothing more than the award, and evidence and award are stored
together or not at all: no evidence without its award, no award without its evidence.

- **The consumer** ``skill_applier`` on ``<PREFIX>_ORACLE``, filtered to the event
  subjects: durable, pull, explicit acks (an ack overdue after the lease time is delivered
  again), created to start after the stream's last message when the first instance with
  ``skill_queue=on`` opens (the events before were applied on their request path). It
  delivers every Oracle event in the order stored; those without the header (other
  events, or awards written by an instance without the queue, whose evidence was applied
  inline) are acked and left alone.
- **The bound**: the consumer's pending events (not yet delivered, or delivered and not
  acked) are the queue's depth; a judgment is refused (``SkillQueueFull``) before anything
  is stored while the depth last looked at (at most ``ADMIT_FOR_S`` before) holds
  ``skill_queue_max_msgs``.
- **One shard**: a consumer cannot split the agents' subjects by a hash, so one applier
  holds the queue at a time (its lease ``shard.0``).
- **Leases**: KV bucket ``<prefix>_appliers``: ``shard.<n>`` holds ``{"holder", "until"}``,
  taken by compare-and-set on its revision (created when absent, replaced when ended or
  held by the same holder); ``present.<holder>`` holds the time until which an instance
  runs appliers; one that ended more than an hour before is purged by the next instance to
  count them.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.kv import KeyValue

from agentladder.errors import SkillQueueFull, StoreError
from agentladder.store.base import LEASE_KEPT_S, OracleApplied, OracleFold
from agentladder.store.nats.config import NatsOptions, QueueOptions, nats_errors
from agentladder.store.nats.io import REQUEST_TIMEOUT, next_msg
from agentladder.store.skillqueue import Pulled, QueueState

__all__ = ["APPLIER", "EVIDENCE_HEADER", "Award", "NatsSkillQueue", "ensure_applier"]

APPLIER = "skill_applier"
"""The durable consumer's name."""
EVIDENCE_HEADER = "Agentladder-Skill"
"""The header of an award's event message that holds its skill evidence's JSON."""
RETRY_AFTER_S = 2.0
"""The ``Retry-After`` of a judgment refused because the queue is full."""
ADMIT_FOR_S = 0.25
"""How long one look at the depth decides admissions (a look is one request)."""

Award = Callable[[str, str, OracleFold, bytes], Awaitable["OracleApplied | None"]]
"""The store's award carrying its evidence (``NatsStore.award``)."""


def _consumer(options: NatsOptions, *, start: DeliverPolicy) -> ConsumerConfig:
    queue = options.skill_queue
    assert queue is not None
    return ConsumerConfig(
        durable_name=APPLIER,
        description="agentladder: skill evidence the awards carry, for the leased applier",
        ack_policy=AckPolicy.EXPLICIT,
        deliver_policy=start,
        ack_wait=queue.lease_s,
        max_ack_pending=10_000,
        filter_subject=f"{options.event_prefix}>",
    )


async def ensure_applier(js: JetStreamContext, options: NatsOptions) -> None:
    """Create the applier's consumer, starting after the stream's last message (every
    event before it was applied on its request path), or bring its ack wait to the
    options' lease time."""
    try:
        info = await js.consumer_info(options.oracle_stream, APPLIER)
    except nats.js.errors.NotFoundError:
        await js.add_consumer(options.oracle_stream, _consumer(options, start=DeliverPolicy.NEW))
        return
    want = _consumer(options, start=info.config.deliver_policy or DeliverPolicy.NEW)
    if info.config.ack_wait != want.ack_wait:
        await js.add_consumer(options.oracle_stream, want)


def _parse_ts(text: str) -> float | None:
    """An RFC 3339 time of nats-server (nanoseconds allowed) in seconds; None for its zero."""
    if text.startswith("0001-"):
        return None
    head, _, rest = text.rstrip("Z").partition(".")
    fraction = float(f"0.{rest}") if rest else 0.0
    return datetime.fromisoformat(head).replace(tzinfo=UTC).timestamp() + fraction


class NatsSkillQueue:
    """``SkillQueue`` (``store/skillqueue.py``) on the Oracle's stream and one KV bucket."""

    def __init__(
        self,
        nc: Client,
        js: JetStreamContext,
        options: NatsOptions,
        leases: KeyValue,
        award: Award,
    ) -> None:
        assert options.skill_queue is not None
        self._nc = nc
        self._js = js
        self._options = options
        self._queue: QueueOptions = options.skill_queue
        self._leases = leases
        self._award = award
        self._stream = options.oracle_stream
        self._filter = f"{options.event_prefix}>"
        self._pull: JetStreamContext.PullSubscription | None = None
        self._refused = 0
        self._looked: tuple[float, int] | None = None  # when, the depth then + admitted since

    @property
    def shards(self) -> int:
        """One: a consumer cannot split the agents' subjects by a hash."""
        return 1

    @property
    def lease_s(self) -> float:
        """The lease time (also the consumer's ack wait)."""
        return self._queue.lease_s

    @property
    def refused(self) -> int:
        """Judgments refused because the queue was full."""
        return self._refused

    @property
    def in_serve(self) -> bool:
        """``skill_queue_applier=serve`` (the default)."""
        return self._queue.in_serve

    async def admit(self) -> None:
        """Refuse while the depth holds the bound: the depth last looked at plus the
        judgments this process admitted since; looked at again (one request) when that
        reaches the bound or the look is ``ADMIT_FOR_S`` old."""
        now = time.monotonic()
        looked = self._looked
        bound = self._queue.max_msgs
        if looked is None or now - looked[0] >= ADMIT_FOR_S or looked[1] >= bound:
            looked = (now, (await self._info())[0])
        if looked[1] < bound:
            self._looked = (looked[0], looked[1] + 1)  # this one, until the next look
        else:
            self._looked = looked
            self._refused += 1
            raise SkillQueueFull(
                "the skill queue is full: the judgment was not stored; retry later",
                RETRY_AFTER_S,
            )

    async def award(
        self, agent_id: str, key: str, fold: OracleFold, evidence: bytes
    ) -> OracleApplied | None:
        """The store's award, its event carrying ``evidence``."""
        return await self._award(agent_id, key, fold, evidence)

    async def _info(self) -> tuple[int, int]:
        """The consumer's depth (events pending: not delivered yet, or not acked) and ack
        floor (the stream sequence up to which every event is acked): one request."""
        with nats_errors("skill queue state", self._nc):
            reply = await self._nc.request(
                f"$JS.API.CONSUMER.INFO.{self._stream}.{APPLIER}", b"", timeout=REQUEST_TIMEOUT
            )
        body = json.loads(reply.data)
        if "error" in body:
            error = body["error"]
            raise StoreError(f"NATS skill queue: JetStream error {error.get('err_code')}")
        depth = int(body.get("num_pending", 0)) + int(body.get("num_ack_pending", 0))
        return depth, int(body.get("ack_floor", {}).get("stream_seq", 0))

    async def state(self) -> QueueState:
        """The consumer's depth (one request), and when the first event not acked was
        stored (a second, when any wait)."""
        depth, floor = await self._info()
        if not depth:
            return QueueState(0, None)
        with nats_errors("skill queue state", self._nc):
            first = await next_msg(self._js, self._stream, self._filter, floor + 1)
            oldest = None if first is None or first.time is None else first.time.timestamp()
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

    async def _subscription(self) -> JetStreamContext.PullSubscription:
        if self._pull is None:
            self._pull = await self._js.pull_subscribe_bind(APPLIER, stream=self._stream)
        return self._pull

    async def pull(self, shard: int, limit: int, wait_s: float) -> Pulled | None:
        """A fetch of the durable consumer (none within ``wait_s``: None)."""
        with nats_errors("skill queue pull", self._nc):
            subscription = await self._subscription()
            try:
                messages = await subscription.fetch(limit, timeout=wait_s)
            except TimeoutError:  # nats-py's and asyncio's alike
                return None
            evidence = [
                data.encode() for m in messages if (data := (m.headers or {}).get(EVIDENCE_HEADER))
            ]
            return Pulled(evidence, _acker(messages))

    async def close(self) -> None:
        """Unsubscribe the pull (the durable consumer stays)."""
        if self._pull is not None:
            with contextlib.suppress(Exception):
                await self._pull.unsubscribe()
        self._pull = None


def _acker(messages: list[Msg]) -> Callable[[], Awaitable[None]]:
    async def ack() -> None:
        for message in messages:
            await message.ack()

    return ack
