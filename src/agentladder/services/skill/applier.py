"""The skill appliers: queued evidence applied by one leased instance per shard.

Every instance whose store keeps a skill queue (``Store.skill_queue``; NATS keeps one
shard) runs one ``SkillApplier``. Every third of the shard lease time it says it is
present, counts the instances present, and holds at most its share of the shards
(``share``: the shards over the instances, rounded up): it renews the leases it holds,
gives up those past its share, and takes free ones (a lease ended or never taken) up to
its share, starting at a shard of its own (``first_shard``) so that instances starting
together try different ones; while below its share, it looks again every ``SHORT_PASS_S``.

For each shard it holds, a loop pulls up to ``BATCH`` awards in the order stored,
applies the evidence they carry in one ``SkillService.observe_many`` (the store's batch
path: each event its own key in the log, each agent's state written once per chunk, the
same folds and compare-and-sets as ``observe``), then acks them. A batch whose apply fails
(the store away) is kept and applied again before the next pull, so each agent's evidence
is applied in the order stored. An evidence applied before (its key in the log) is a
no-op, so a batch redelivered after its holder died, or pulled by two holders around a
handover, is applied once. A loop pauses its pulls while its lease has ended without a
renewal (the store away), until a pass renews it or finds it taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
from collections.abc import Sequence

from pydantic import ValidationError

from agentladder.domain.skill.evidence import Evidence
from agentladder.errors import StoreUnavailable
from agentladder.services.clock import Clock
from agentladder.services.passes import QuietPasses, cancelled
from agentladder.services.skill.service import EVIDENCE, SkillService
from agentladder.store.skillqueue import Pulled, SkillQueue

__all__ = ["BATCH", "SkillApplier", "first_shard", "share"]

log = logging.getLogger(__name__)

BATCH = 256
"""Awards pulled and their evidence applied at once per shard."""
PULL_WAIT_S = 1.0
"""How long a pull waits for the first evidence."""
SHORT_PASS_S = 0.5
"""The pause before the next pass while an instance holds fewer shards than its share (the
instances past theirs give them up at their next pass, and the shards wait meanwhile)."""
STOP_WAIT_S = 5.0
"""How long a stop lets the batches in flight end before cancelling them."""


def share(shards: int, instances: int) -> int:
    """The shards one instance holds at most while ``instances`` are present."""
    return math.ceil(shards / max(1, instances))


def first_shard(holder: str, shards: int) -> int:
    """The shard an instance tries first (a hash of its id)."""
    return int.from_bytes(hashlib.sha256(holder.encode()).digest()[:4], "big") % shards


def decoded(batch: Sequence[bytes]) -> list[Evidence]:
    """The evidences of a batch; one that cannot be read is logged and left out (it is
    acked with the others: applying it can never succeed)."""
    out = []
    for queued in batch:
        try:
            out.append(EVIDENCE.validate_json(queued))
        except ValidationError as error:
            log.error("a queued skill evidence cannot be read, dropped: %s", error)
    return out


class SkillApplier:
    """The appliers of one instance: leases of its share of the shards, and one loop per
    shard held."""

    def __init__(self, queue: SkillQueue, skill: SkillService, holder: str, clock: Clock) -> None:
        self.queue = queue
        self.skill = skill
        self.holder = holder
        self.clock = clock
        self.applied = 0
        """Evidences applied (acked) by this instance: ``agentladder_skill_applied_total``."""
        self._held: dict[int, Pulled] = {}  # a shard's batch pulled and not applied yet
        self.batches = 0
        self._until: dict[int, float] = {}  # the shards held, and until when
        self._loops: dict[int, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._short = False  # below its share after the last pass: the next one comes soon

    @property
    def held(self) -> frozenset[int]:
        """The shards this instance applies now."""
        return frozenset(self._loops)

    def now(self) -> float:
        """The clock's time in seconds."""
        return self.clock.now().timestamp()

    async def start(self) -> None:
        """Take this instance's shards now, then keep them in the background until ``stop``."""
        passes = QuietPasses(f"the skill appliers of {self.holder}", (StoreUnavailable,))
        await passes.run(self.one_pass)

        async def keep() -> None:
            while True:
                pause = self.queue.lease_s / 3
                if self._short:  # shards to take soon: another instance is giving them up
                    pause = min(pause, SHORT_PASS_S)
                await asyncio.sleep(pause)
                await passes.run(self.one_pass)

        self._task = asyncio.ensure_future(keep())

    async def one_pass(self) -> None:
        """Say present, renew the leases held within the share, give up the rest, take free
        shards up to the share."""
        now = self.now()
        until = now + self.queue.lease_s
        most = share(self.queue.shards, await self.queue.present(self.holder, until, now))
        for shard, loop in list(self._loops.items()):
            if loop.done():  # it cannot have ended by itself; if it did, the shard is taken anew
                log.warning("the skill applier of shard %d had ended: %r", shard, loop)
                self._loops.pop(shard)
                self._until.pop(shard, None)
        for shard in sorted(self._loops)[most:]:
            await self._give_up(shard)
        for shard in sorted(self._loops):
            if await self.queue.take(shard, self.holder, until, now):
                self._until[shard] = until
            else:  # another holder took it (this lease had ended): stop at once
                await self._give_up(shard, release=False)
        self._short = False
        if len(self._loops) >= most:
            return
        holders = await self.queue.holders(now)
        start = first_shard(self.holder, self.queue.shards)
        for offset in range(self.queue.shards):
            shard = (start + offset) % self.queue.shards
            if len(self._loops) >= most:
                break
            if shard in self._loops or shard in holders:
                continue
            if await self.queue.take(shard, self.holder, until, now):
                self._until[shard] = until
                self._loops[shard] = asyncio.ensure_future(self._apply_shard(shard))
                log.info("instance %s applies skill shard %d", self.holder, shard)
        self._short = len(self._loops) < most

    async def _give_up(self, shard: int, *, release: bool = True) -> None:
        loop = self._loops.pop(shard, None)
        self._until.pop(shard, None)
        self._held.pop(shard, None)  # not acked: delivered again to the next holder
        if loop is not None:
            await _ended(loop, STOP_WAIT_S)
        if release:
            await self.queue.release(shard, self.holder)

    async def _apply_shard(self, shard: int) -> None:
        """Pull and apply while the shard is held (until given up or the stop); a lease not
        renewed in time (the store away) pauses the pulls until a pass renews it, or finds
        that another instance took the shard (then this loop is given up)."""
        passes = QuietPasses(f"the skill applier of shard {shard}", (StoreUnavailable,))
        while not self._stopping and shard in self._until:
            if self._until[shard] <= self.now():
                await asyncio.sleep(PULL_WAIT_S)
            elif not await passes.run(lambda: self.apply_batch(shard)):
                await asyncio.sleep(PULL_WAIT_S)  # the store is away: the next pull retries

    async def apply_batch(self, shard: int) -> int:
        """Pull one batch of ``shard`` (or take the one whose apply failed), apply its
        evidence, ack it; how many evidences it held."""
        batch = self._held.pop(shard, None) or await self.queue.pull(shard, BATCH, PULL_WAIT_S)
        if batch is None:
            return 0
        evidence = decoded(batch.evidence)
        if evidence:
            self._held[shard] = batch  # until applied: the next attempt applies it first
            await self.skill.observe_many(evidence, fresh=True)
            self._held.pop(shard, None)
        await batch.ack()
        self.applied += len(batch.evidence)
        self.batches += 1
        return len(batch.evidence)

    async def stop(self) -> None:
        """Let the batches in flight end (up to ``STOP_WAIT_S``), give up every shard and
        say this instance absent: the others take the shards at their next pass."""
        self._stopping = True
        if self._task is not None:
            await cancelled([self._task])
            self._task = None
        try:
            for shard in sorted(self._loops):
                await self._give_up(shard)
            await self.queue.absent(self.holder)
        except StoreUnavailable as error:  # its leases run out by themselves
            log.warning("the skill shards of %s are left to run out: %s", self.holder, error)


async def _ended(task: asyncio.Task[None], wait_s: float) -> None:
    """Wait for ``task`` to end by itself for ``wait_s`` (its batch in flight), then cancel."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(task), wait_s)
    if not task.done():
        await cancelled([task])
    elif not task.cancelled() and task.exception() is not None:
        log.warning("a skill applier ended with %r", task.exception())
