"""The Oracle in one JetStream stream, ``<PREFIX>_ORACLE`` on ``<prefix>.oracle.>``.

- ``<prefix>.oracle.event.<agent_id>``: one message per applied event, the JSON of
  ``{"event": OracleEvent, "profile": AgentProfile after it}`` (an ``OracleCommit`` with
  ``event.seq`` set). An agent's profile is the LAST message on its subject and its
  revision is that message's stream sequence, so the profile is the replay of the events
  by construction: there is no separate profile write that could be half done.
- ``<prefix>.oracle.key.<agent_id>.<token>``: the idempotency claim of one event key
  (token: 40 hex digits of the key's SHA-256), holding the ``OracleEvent`` JSON.

An event is applied exactly once without a batch (whose commit makes the server sync its
store, several times the cost of a plain publish):

1. The event message is published with the expected last subject sequence = the revision
   its profile was folded from: one compare-and-set, atomic by itself. Its stream
   sequence is the new revision.
2. Invariant: before event n+1 is published, the claim of event n exists (expected: no
   message yet on the claim subject; one that exists is left as it is). The writer of
   n+1 makes sure of it (it knows event n: it folded from it), in the same round trip as
   it checks that its own key has no claim, and it refuses a key that is event n's.
3. So every key but the agent's LAST event's has its claim, and ``get_event`` looks at
   the claim, then at the last event, then at the claim again (an event that was the
   last at the first look and was followed since has its claim by then). The last
   event's claim is written by the next commit for the agent, whoever makes it.

An agent's head (its last event message) is taken, newest first, from this process's own
last commit for the agent, from the leaderboard index (``HeadSource``), else read from
the server. A stale head costs a refused compare-and-set; the retry reads the server's.

A writer killed at any point leaves either no event or a stored event that ``get_event``
finds; nothing is half-applied, and no key can be applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping

from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from agentladder.domain.agents import validate_agent_name
from agentladder.domain.frozen import replaced
from agentladder.domain.profile import AgentProfile
from agentladder.errors import AlreadyApplied, InvalidInput, RevisionConflict, StoreError
from agentladder.store.base import LedgerEntry, OracleApplied, OracleFold
from agentladder.store.codec import decode
from agentladder.store.lru import Lru
from agentladder.store.nats.batch import BatchMessage, publish_expected
from agentladder.store.nats.config import NatsOptions
from agentladder.store.nats.io import REQUEST_TIMEOUT, last_msg, scan, scan_page
from agentladder.store.records import OracleCommit, OracleEvent, Versioned

__all__ = ["LINES_PER_EVENT", "HeadSource", "OracleLog"]

log = logging.getLogger(__name__)

LINES_PER_EVENT = 1000
"""Ledger ids are ``stream sequence * 1000 + line index``: at most 1000 lines per event."""

_CACHE_LIMIT = 100_000
"""Bound of the per-agent maps of small values (heads, stale marks)."""
_CLAIM_CACHE = 10_000
"""Bound of the claims known to exist (each saves a publish when met again)."""

HeadSource = Callable[[str], "tuple[int, bytes] | None"]
"""An agent's last event message as some reader of the stream saw it: (sequence, bytes)."""
_RECORD_CACHE = 1_000
"""Bound of the decoded event messages kept. Small on purpose: a decoded message is some
50 objects the garbage collector walks, and the leaderboard index keeps each agent's
last message as bytes, so a judgment rarely needs an old one decoded again."""


def _ledger_lines(seq: int, event: OracleEvent) -> list[LedgerEntry]:
    """The ledger lines of the event stored at stream sequence ``seq``."""
    contract_id = str(event.payload.get("contract_id", event.key))
    return [
        LedgerEntry(
            id=seq * LINES_PER_EVENT + index,
            agent_id=event.agent_id,
            event=line.event,
            xp_awarded=line.xp,
            contract_id=contract_id,
            timestamp=event.at,
        )
        for index, line in enumerate(event.lines)
    ]


def _agent_ok(agent_id: str) -> bool:
    """Whether ``agent_id`` is a valid agent name (so it can have data at all)."""
    try:
        validate_agent_name(agent_id, "agent_id")
    except InvalidInput:
        return False
    return True


class OracleLog:
    """Profiles, events and the ledger of every agent, in the Oracle stream."""

    def __init__(
        self,
        nc: Client,
        js: JetStreamContext,
        options: NatsOptions,
        known_head: HeadSource | None = None,
    ) -> None:
        self._nc = nc
        self._js = js
        self._options = options
        self._stream = options.oracle_stream
        self._claimed: set[tuple[str, str]] = set()  # (agent, key) whose claim exists
        self._decoded: Lru[int, OracleCommit] = Lru(_RECORD_CACHE)  # stream seq -> message
        self._heads: dict[str, int] = {}  # agent -> stream seq of its last event seen here
        self._known_head = known_head
        self._stale: set[str] = set()  # agents whose next head is read from the server

    def _record(self, agent_id: str, stream_seq: int, data: bytes | None) -> OracleCommit:
        """The event message at ``stream_seq`` (messages never change: decoded once)."""
        cached = self._decoded.get(stream_seq)
        if cached is not None and cached.event.agent_id == agent_id:
            return cached
        record = decode(OracleCommit, data or b"", self._options.event_subject(agent_id))
        self._decoded.put(stream_seq, record)
        return record

    def profile_at(self, agent_id: str, seq: int, data: bytes) -> Versioned[AgentProfile]:
        """The profile of the agent's event message at stream sequence ``seq`` (its bytes
        as received: the leaderboard index's head), with ``seq`` as the revision."""
        return Versioned(self._record(agent_id, seq, data).profile, seq)

    async def get_profile(self, agent_id: str) -> Versioned[AgentProfile] | None:
        """The last event message's profile, with its stream sequence as the revision."""
        if not _agent_ok(agent_id):
            return None
        msg = await last_msg(self._js, self._stream, self._options.event_subject(agent_id))
        if msg is None or msg.seq is None:
            return None
        self._set_head(agent_id, msg.seq)
        return Versioned(self._record(agent_id, msg.seq, msg.data).profile, msg.seq)

    async def list_profiles(self) -> list[AgentProfile]:
        """The last event message of every agent, by agent id."""
        prefix = self._options.event_prefix
        messages = await scan(self._js, self._stream, f"{prefix}>", last_per_subject=True)
        found = {}
        for msg in messages:
            agent_id = msg.subject.removeprefix(prefix)
            found[agent_id] = self._record(agent_id, msg.metadata.sequence.stream, msg.data)
        return [record.profile for _, record in sorted(found.items())]

    async def last_event_seq(self) -> int:
        """The stream sequence of the newest event message of any agent (0: none)."""
        msg = await last_msg(self._js, self._stream, f"{self._options.event_prefix}>")
        return 0 if msg is None else int(msg.seq or 0)

    async def _event_at(self, agent_id: str, revision: int) -> OracleEvent | None:
        """``agent_id``'s event stored at stream sequence ``revision`` (None: not one)."""
        cached = self._decoded.get(revision)
        if cached is not None:
            return cached.event if cached.event.agent_id == agent_id else None
        try:
            msg = await self._js.get_msg(self._stream, seq=revision)
        except NotFoundError:
            return None
        if msg.subject != self._options.event_subject(agent_id):
            return None
        return self._record(agent_id, revision, msg.data).event

    async def _refusal(
        self, event: OracleEvent, expected: int
    ) -> AlreadyApplied | RevisionConflict:
        """Why a commit of ``event`` on revision ``expected`` cannot be applied."""
        existing = await self.get_event(event.agent_id, event.key)
        if existing is not None:
            return AlreadyApplied(f"{event.agent_id}/{event.key}", existing)
        current = await self.get_profile(event.agent_id)
        return RevisionConflict(
            event.agent_id, expected, 0 if current is None else current.revision
        )

    async def _claim(self, event: OracleEvent) -> None:
        """Write the claim of a stored event (it may exist already: then nothing changes)."""
        marker = (event.agent_id, event.key)
        if marker in self._claimed:
            return
        subject = self._options.claim_subject(event.agent_id, event.key)
        message = BatchMessage(subject, event.model_dump_json().encode(), 0)
        with contextlib.suppress(RevisionConflict):  # claimed before: nothing to do
            await publish_expected(self._nc, message, timeout=REQUEST_TIMEOUT)
        if len(self._claimed) >= _CLAIM_CACHE:
            self._claimed.clear()
        self._claimed.add(marker)

    async def _head(self, agent_id: str) -> tuple[int, OracleCommit | None]:
        """The agent's last event message: the newest of this process's last commit for it
        and the index's, else (or after a refused compare-and-set) as stored now.

        Folding from a head that another instance has since moved costs nothing wrong:
        the compare-and-set refuses it and the retry reads the stored head.
        """
        if agent_id not in self._stale:
            seq = self._heads.get(agent_id)
            own = None if seq is None else self._decoded.get(seq)
            known = None if self._known_head is None else self._known_head(agent_id)
            if known is not None and (own is None or seq is None or known[0] > seq):
                return known[0], self._record(agent_id, known[0], known[1])
            if own is not None and seq is not None:
                return seq, own
        msg = await last_msg(self._js, self._stream, self._options.event_subject(agent_id))
        self._stale.discard(agent_id)
        if msg is None or msg.seq is None:
            return 0, None
        record = self._record(agent_id, msg.seq, msg.data)
        self._set_head(agent_id, msg.seq)  # newer than what the index may still hold
        return msg.seq, record

    def _set_head(self, agent_id: str, seq: int | None) -> None:
        if seq is None:  # read the stored head next time
            self._heads.pop(agent_id, None)
            if len(self._stale) >= _CACHE_LIMIT:
                self._stale.clear()
            self._stale.add(agent_id)
            return
        self._stale.discard(agent_id)
        if len(self._heads) >= _CACHE_LIMIT:
            self._heads.clear()
        self._heads[agent_id] = seq

    async def apply(
        self,
        agent_id: str,
        key: str,
        fold: OracleFold,
        headers: Mapping[str, str] | None = None,
    ) -> OracleApplied | None:
        """One attempt of ``Store.apply_oracle``: fold from the head, commit
        (``RevisionConflict`` when another writer got there first; the caller retries);
        ``headers`` go with a created event's message (the skill queue's evidence)."""
        revision, last = await self._head(agent_id)
        if last is not None and last.event.key == key:
            return OracleApplied(last.event, last.profile, created=False)
        claim = self._options.claim_subject(agent_id, key)
        lookups = [last_msg(self._js, self._stream, claim)]
        if last is not None:
            lookups.append(self._claim(last.event))
        claimed = (await asyncio.gather(*lookups))[0]
        if claimed is not None:
            if last is None:
                raise StoreError(f"{claim} exists but {agent_id} has no event")
            return OracleApplied(
                decode(OracleEvent, claimed.data or b"", claim), last.profile, created=False
            )
        commit = fold(None if last is None else last.profile)
        if commit is None:
            return None
        try:
            await self.commit(commit, revision, key_checked=True, headers=headers)
        except RevisionConflict:
            self._set_head(agent_id, None)
            raise
        except AlreadyApplied as raced:
            current = await self.get_profile(agent_id)
            if not isinstance(raced.existing, OracleEvent) or current is None:
                raise
            return OracleApplied(raced.existing, current.value, created=False)
        stored = replaced(commit.event, seq=1 if last is None else last.event.seq + 1)
        return OracleApplied(stored, commit.profile, created=True)

    async def commit(
        self,
        commit: OracleCommit,
        expected: int,
        *,
        key_checked: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> int:
        """Append the event with the new profile on revision ``expected``, once per key.

        ``key_checked``: the caller read the claim of the key after reading the event at
        ``expected`` and found none, so it is not looked up again.
        """
        event = commit.event
        agent_id = validate_agent_name(event.agent_id, "agent_id")
        if isinstance(expected, bool) or not isinstance(expected, int) or expected < 0:
            raise InvalidInput("expected_revision", expected, "must be an integer >= 0")
        previous = None if expected == 0 else await self._event_at(agent_id, expected)
        if expected and previous is None:
            raise await self._refusal(event, expected)
        if previous is not None and previous.key == event.key:
            raise AlreadyApplied(f"{agent_id}/{event.key}", previous)
        # The invariant (event n's claim before event n+1) and this key's own check, at once.
        checks = [] if previous is None else [self._claim(previous)]
        if not key_checked:
            checks.append(self._refuse_claimed(event, expected))
        await asyncio.gather(*checks)
        stored = replaced(event, seq=1 if previous is None else previous.seq + 1)
        record = OracleCommit(event=stored, profile=commit.profile)
        subject = self._options.event_subject(agent_id)
        message = BatchMessage(subject, record.model_dump_json().encode(), expected, headers)
        try:
            seq = await publish_expected(self._nc, message, timeout=REQUEST_TIMEOUT)
        except RevisionConflict:
            raise await self._refusal(event, expected) from None
        self._decoded.put(seq, record)
        self._set_head(agent_id, seq)
        return seq  # this event's claim is written by the next commit for the agent

    async def _refuse_claimed(self, event: OracleEvent, expected: int) -> None:
        claim = self._options.claim_subject(event.agent_id, event.key)
        if await last_msg(self._js, self._stream, claim) is not None:
            raise await self._refusal(event, expected)

    async def get_event(self, agent_id: str, key: str) -> OracleEvent | None:
        """The event with ``key``: its claim, or the agent's last event (claim not yet
        written), or its claim again: the key's event may have been the last when its claim
        was read and been followed by another since, whose writer wrote the claim first
        (the invariant), so the second read finds it."""
        if not _agent_ok(agent_id):
            return None
        found = await self._claimed_event(agent_id, key)
        if found is not None:
            return found
        last = await last_msg(self._js, self._stream, self._options.event_subject(agent_id))
        if last is None or last.seq is None:
            return None
        event = self._record(agent_id, last.seq, last.data).event
        if event.key == key:
            return event
        return await self._claimed_event(agent_id, key)

    async def _claimed_event(self, agent_id: str, key: str) -> OracleEvent | None:
        claim = self._options.claim_subject(agent_id, key)
        msg = await last_msg(self._js, self._stream, claim)
        if msg is None:
            return None
        event = decode(OracleEvent, msg.data or b"", claim)
        return event if (event.agent_id, event.key) == (agent_id, key) else None

    async def _records(self, agent_id: str) -> list[tuple[int, OracleCommit]]:
        if not _agent_ok(agent_id):
            return []
        subject = self._options.event_subject(agent_id)
        messages = await scan(self._js, self._stream, subject, last_per_subject=False)
        return [
            (m.metadata.sequence.stream, self._record(agent_id, m.metadata.sequence.stream, m.data))
            for m in messages
        ]

    async def events(self, agent_id: str) -> list[OracleEvent]:
        """Every event of the agent, in the order applied."""
        return [record.event for _, record in await self._records(agent_id)]

    async def ledger(self, agent_id: str, offset: int, limit: int) -> list[LedgerEntry]:
        """The events' ledger lines flattened, oldest first, one page."""
        entries = []
        for seq, record in await self._records(agent_id):
            entries += _ledger_lines(seq, record.event)
        return entries[offset : offset + limit]

    async def events_after(self, after: int, limit: int) -> list[tuple[int, OracleEvent]]:
        """Up to ``limit`` event messages of every agent after stream sequence ``after``,
        with their sequences (decoded here, not kept: a reading of every event would only
        push the recent ones out of the cache)."""
        messages = await scan_page(
            self._js, self._stream, f"{self._options.event_prefix}>", start=after + 1, limit=limit
        )
        return [
            (m.metadata.sequence.stream, decode(OracleCommit, m.data, m.subject).event)
            for m in messages
        ]

    async def ledger_after(self, after: int, limit: int) -> list[LedgerEntry]:
        """Up to ``limit`` ledger lines of every agent with an id above ``after``: the lines
        of the events from the one holding line ``after`` on (ids are ``sequence * 1000 +
        index``)."""
        entries: list[LedgerEntry] = []
        position = max(after // LINES_PER_EVENT - 1, 0)
        while len(entries) < limit:
            page = await self.events_after(position, limit)
            if not page:
                break
            for seq, event in page:
                entries += [e for e in _ledger_lines(seq, event) if e.id > after]
            position = page[-1][0]
        return entries[:limit]
