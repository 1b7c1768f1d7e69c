"""The Oracle in one JetStream stream, ``<PREFIX>_ORACLE`` on ``<prefix>.oracle.>``.

- ``<prefix>.oracle.event.<agent_id>``: one message per applied event, the JSON of
  ``{"event": OracleEvent, "profile": AgentProfile after it}`` (an ``OracleCommit`` with
  ``event.seq`` set). An agent's profile is the LAST message on its subject and its
  revision is that message's stream sequence, so the profile is the replay of the events
  by construction: there is no separate profile write that could be half done.
- ``<prefix>.oracle.key.<agent_id>.<token>``: the idempotency claim of one event key
  (token: 40 hex digits of the key's SHA-256), holding the ``OracleEvent`` JSON.

``commit`` is ONE atomic batch: the claim (expected: no message yet on its subject), then
the event (expected last subject sequence: the agent's current revision). Either both are
stored or neither, so an event is applied exactly once, also when two writers race or a
writer dies mid-commit. The event message is last, so the batch ack's sequence is the new
revision.
"""

from __future__ import annotations

from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from agentladder.domain.agents import validate_agent_name
from agentladder.domain.profile import AgentProfile
from agentladder.errors import AlreadyApplied, InvalidInput, RevisionConflict
from agentladder.store.base import LedgerEntry
from agentladder.store.codec import decode
from agentladder.store.nats_batch import BatchMessage, publish_atomic
from agentladder.store.nats_config import NatsOptions
from agentladder.store.nats_io import REQUEST_TIMEOUT, last_msg, scan
from agentladder.store.records import OracleCommit, OracleEvent, Versioned

__all__ = ["LINES_PER_EVENT", "OracleLog"]

LINES_PER_EVENT = 1000
"""Ledger ids are ``stream sequence * 1000 + line index``: at most 1000 lines per event."""

_CACHE_LIMIT = 100_000


def _agent_ok(agent_id: str) -> bool:
    """Whether ``agent_id`` is a valid agent name (so it can have data at all)."""
    try:
        validate_agent_name(agent_id, "agent_id")
    except InvalidInput:
        return False
    return True


class OracleLog:
    """Profiles, events and the ledger of every agent, in the Oracle stream."""

    def __init__(self, nc: Client, js: JetStreamContext, options: NatsOptions) -> None:
        self._nc = nc
        self._js = js
        self._options = options
        self._stream = options.oracle_stream
        self._event_seqs: dict[int, tuple[str, int]] = {}  # stream seq -> (agent, event seq)

    def _remember(self, stream_seq: int, agent_id: str, event_seq: int) -> None:
        if len(self._event_seqs) >= _CACHE_LIMIT:
            self._event_seqs.clear()
        self._event_seqs[stream_seq] = (agent_id, event_seq)

    def _record(self, agent_id: str, stream_seq: int, data: bytes | None) -> OracleCommit:
        record = decode(OracleCommit, data or b"", self._options.event_subject(agent_id))
        self._remember(stream_seq, agent_id, record.event.seq)
        return record

    async def get_profile(self, agent_id: str) -> Versioned[AgentProfile] | None:
        """The last event message's profile, with its stream sequence as the revision."""
        if not _agent_ok(agent_id):
            return None
        msg = await last_msg(self._js, self._stream, self._options.event_subject(agent_id))
        if msg is None or msg.seq is None:
            return None
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

    async def _event_seq_at(self, agent_id: str, revision: int) -> int | None:
        """The event seq of ``agent_id``'s event stored at ``revision`` (None: not one)."""
        if revision == 0:
            return 0
        cached = self._event_seqs.get(revision)
        if cached is not None:
            return cached[1] if cached[0] == agent_id else None
        try:
            msg = await self._js.get_msg(self._stream, seq=revision)
        except NotFoundError:
            return None
        if msg.subject != self._options.event_subject(agent_id):
            return None
        return self._record(agent_id, revision, msg.data).event.seq

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

    async def commit(self, commit: OracleCommit, expected: int) -> int:
        """Claim the event's key and append the event with the new profile, atomically."""
        event = commit.event
        agent_id = validate_agent_name(event.agent_id, "agent_id")
        if isinstance(expected, bool) or not isinstance(expected, int) or expected < 0:
            raise InvalidInput("expected_revision", expected, "must be an integer >= 0")
        previous = await self._event_seq_at(agent_id, expected)
        if previous is None:
            raise await self._refusal(event, expected)
        stored = event.model_copy(update={"seq": previous + 1})
        record = OracleCommit(event=stored, profile=commit.profile)
        claim = self._options.claim_subject(agent_id, event.key)
        subject = self._options.event_subject(agent_id)
        messages = [
            BatchMessage(claim, stored.model_dump_json().encode(), 0),
            BatchMessage(subject, record.model_dump_json().encode(), expected),
        ]
        try:
            ack = await publish_atomic(self._nc, messages, timeout=REQUEST_TIMEOUT)
        except RevisionConflict as conflict:
            if conflict.key == claim:
                raise await self._refusal(event, expected) from None
            raise RevisionConflict(agent_id, expected, conflict.actual) from None
        self._remember(ack.seq, agent_id, stored.seq)
        return ack.seq

    async def get_event(self, agent_id: str, key: str) -> OracleEvent | None:
        """The event stored in the key's claim, or None."""
        if not _agent_ok(agent_id):
            return None
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
            event = record.event
            contract_id = str(event.payload.get("contract_id", event.key))
            entries += [
                LedgerEntry(
                    id=seq * LINES_PER_EVENT + index,
                    agent_id=agent_id,
                    event=line.event,
                    xp_awarded=line.xp,
                    contract_id=contract_id,
                    timestamp=event.at,
                )
                for index, line in enumerate(event.lines)
            ]
        return entries[offset : offset + limit]
