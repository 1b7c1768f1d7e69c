"""``agentladder skill apply``: a process that only applies the skill queue's evidence.

With ``skill_queue=on`` on NATS every ``agentladder serve`` runs an applier by default;
one holds the queue's lease and applies the evidence the awards carry. That fold is pure
CPU in the instance's one event loop, beside its requests. With
``skill_queue_applier=apart`` in the store URL ``serve`` runs none, and this command runs
the applier as a process of its own (on another core, or another machine): any number of
them may run, one holds the lease, another takes it when the holder dies
(docs/storage-nats.md, "The skill queue")."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid

from agentladder.cli.commands import console
from agentladder.cli.data import ConfigOpt, StoreOpt, _with_services
from agentladder.cli.skills import skill_app
from agentladder.errors import InvalidInput
from agentladder.services.clock import SystemClock
from agentladder.services.container import Services
from agentladder.services.skill.applier import SkillApplier

__all__ = ["skill_apply"]


@skill_app.command("apply")
def skill_apply(config: ConfigOpt = None, store: StoreOpt = None) -> None:
    """Apply the skill queue's evidence until stopped (SIGINT or SIGTERM: the batch in
    flight ends, the lease is given up); for a NATS store with skill_queue=on (with
    skill_queue_applier=apart, serve leaves the queue to these processes)."""
    applied = _with_services(config, store, _apply)
    console.print(f"skill applier stopped: {applied} evidences applied", highlight=False)


async def _apply(services: Services) -> int:
    queue = services.skill.queue
    if queue is None:
        raise InvalidInput("store", services.store.url, "keeps no skill queue: use a NATS URL"
                           " with skill_queue=on")  # fmt: skip
    holder = f"apply-{uuid.uuid4().hex[:12]}"
    applier = SkillApplier(queue, services.skill, holder, SystemClock())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await applier.start()
    console.print(f"skill applier {holder} running on {services.store.url}", highlight=False)
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(signum)
        await applier.stop()
    return applier.applied
