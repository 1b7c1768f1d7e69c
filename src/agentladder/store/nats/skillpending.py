"""A single-agent skill event written without an atomic batch: its agent's state carries it
until it is in the log.

An event that touches one agent, and whose key names that agent (``single``), is written by
two plain publishes, like the Oracle's events (``store/nats/oracle.py``), so the server has
no batch commit to sync its file store for:

1. the agent's state ``a.<agent_id>``, compare-and-set on the revision the fold read it at,
   its value carrying the event (``pending_value``): this is the commit. The event is now
   stored, in the one message that also holds what it did to the state;
2. the event's log entry ``e.<token>``, expected absent: written by the same writer right
   after, and, should it die between the two, by whoever overwrites the state next.

Invariant: a state that carries an event is overwritten only once that event is in the log
(``PendingLog.write``): every writer of ``a.<agent_id>`` (the next event of the agent,
single or batch, a fit's chunk) writes the event the state it read carries first, and its
compare-and-set on that read's revision makes sure nothing came between. So an agent's
events enter the log in the order their states were committed, each before the next one's
state: replay in ``seq`` order (an event's seq is its log entry's stream sequence) folds
each from the state the one before left, as the batch did. ``NatsStore`` writes on opening
whatever events a writer that died left in states only (``SkillKv.repair``).

A key applied once: the writer reads the agent's state before looking the key up in the
log. A key already applied is then either the event the state carries, or it was in the
log before that state was written (the invariant), or it commits after the read, which
makes this writer's compare-and-set fail. The key names the agent, so no event of another
agent can hold the same key meanwhile (a deliberation's key does not: its events keep their
batch, ``store/nats/skills.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from nats.aio.client import Client
from pydantic import TypeAdapter

from agentladder.domain.skill.state import AgentSkill
from agentladder.errors import RevisionConflict, StoreError
from agentladder.store.codec import decode_as
from agentladder.store.nats.batch import BatchMessage, publish_expected
from agentladder.store.nats.config import claim_token
from agentladder.store.nats.io import REQUEST_TIMEOUT
from agentladder.store.skills import SkillEvent, decode_state

__all__ = ["Entry", "PendingLog", "Repairs", "decode_entry", "pending_value", "single"]

log = logging.getLogger(__name__)

_PREFIX = b'{"event":'
_KNOWN = 10_000
"""Bound of the log entries this process knows exist (each saves a publish when met again)."""
_AT_ONCE = 256
"""Log entries ``write`` publishes at once (a repair of every state)."""


@dataclass(frozen=True, slots=True)
class _Pending:
    event: SkillEvent
    skill: AgentSkill
    fleet: int | None = None  # the fleet's revision the fold read (None: written before)


@dataclass(frozen=True, slots=True)
class Entry:
    """An agent's state value as read: the state (None: a legacy one, ``decode_state``),
    the event it carries (None: none) and the revision of the fleet's state that event was
    folded with (None: not known, e.g. a state a batch or a fit wrote; 0: no fleet yet)."""

    state: AgentSkill | None
    event: SkillEvent | None = None
    fleet: int | None = None


_PENDING: TypeAdapter[_Pending] = TypeAdapter(_Pending)


def single(key: str, agents: Sequence[str]) -> bool:
    """Whether an event is written by single publishes: it touches one agent and its key
    names it (``<kind>:<agent_id>:...``: the service's judgment, verdict and model-change
    keys; agent names hold no ``:``), so no other agent's event can have the same key."""
    if len(agents) != 1:
        return False
    parts = key.split(":", 2)
    return len(parts) == 3 and parts[1] == agents[0]


def event_bytes(event: SkillEvent) -> bytes:
    """An event as the log stores it (its ``seq`` 0: the stream sequence is its seq)."""
    return event.model_copy(update={"seq": 0}).model_dump_json().encode()


def pending_value(state: bytes, event: bytes, fleet: int) -> bytes:
    """A state's value carrying the event that wrote it (both JSON) and the revision of the
    fleet's state its fold read (0: none yet)."""
    return b'%s%s,"fleet":%d,"skill":%s}' % (_PREFIX, event, fleet, state)


def decode_entry(data: bytes, key: str) -> Entry:
    """A state's value, as ``Entry``."""
    if not data.startswith(_PREFIX):
        return Entry(decode_state(data, key))
    found = decode_as(_PENDING, data, key)
    return Entry(found.skill, found.event, found.fleet)


class PendingLog:
    """Writes the log entries of events that states carry, once each as far as it knows."""

    def __init__(self, nc: Client, pre: str) -> None:
        self._nc = nc
        self._pre = pre  # the bucket's subjects' start, ``$KV.<bucket>.``
        self._known: set[str] = set()  # tokens whose log entry exists

    def _remember(self, token: str) -> None:
        if len(self._known) >= _KNOWN:
            self._known.clear()
        self._known.add(token)

    async def entry(self, event: SkillEvent, data: bytes | None = None) -> int | None:
        """Write the event's log entry (``data``: ``event_bytes`` of it, when known); its
        stream sequence, None when it existed."""
        token = claim_token(event.key)
        message = BatchMessage(f"{self._pre}e.{token}", data or event_bytes(event), 0)
        try:
            seq: int | None = await publish_expected(self._nc, message, timeout=REQUEST_TIMEOUT)
        except RevisionConflict:
            seq = None  # its writer (or another repair) wrote it first
        self._remember(token)
        return seq

    async def write(self, events: Iterable[SkillEvent]) -> None:
        """Make sure each event is in the log (those known to be are skipped)."""
        todo = [e for e in events if claim_token(e.key) not in self._known]
        for start in range(0, len(todo), _AT_ONCE):
            await asyncio.gather(*(self.entry(e) for e in todo[start : start + _AT_ONCE]))


class Repairs:
    """A store's repair at opening (``SkillKv.repair``: the events that states written
    since the last repair carry, put in the log), run in the background: writers need not
    wait for it (each puts in the log what the state it replaces carries), readers of the
    log do (``wait``)."""

    def __init__(self, repair: Callable[[], Awaitable[int]]) -> None:
        self._repair = repair
        self._done = False  # it ran to its end in this process
        self._running = asyncio.Lock()
        self._task: asyncio.Future[None] | None = None

    def start(self) -> None:
        """Begin it in the background."""
        self._task = asyncio.ensure_future(self._background())

    async def _background(self) -> None:
        try:
            await self.wait()
        except StoreError as error:  # e.g. the server went away: the first reader retries
            log.warning("the skill log's repair at opening failed: %s", error)

    async def wait(self) -> None:
        """Once the repair has run to its end in this process (running it if need be)."""
        if self._done:
            return
        async with self._running:
            if not self._done:
                await self._repair()
                self._done = True

    async def stop(self) -> None:
        """Cancel it if it still runs (a store's close)."""
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
