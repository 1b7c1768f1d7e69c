"""The evidence model's log and states in the JetStream KV bucket ``<prefix>_skills``.

Keys: ``a.<agent_id>`` (an agent's state), ``fleet`` (the fleet's), ``e.<token>`` (the
event of one key; token: ``claim_token``), ``fit`` (the instance committing a fit, see
``store/nats/skillfit.py``), ``repaired`` (how far ``SkillKv.repair`` looked) and ``head``
(a fence against the previous format, below).

An event that touches one agent and whose key names it (a judgment, a verdict, a model
change: most of them) is written by two plain publishes, no batch: the agent's state,
compare-and-set on its revision and carrying the event, then the event's log entry
(``store/nats/skillpending.py``). Any other event (a deliberation's, which touches several
agents) is one atomic batch: the event, expected absent (once per key), then the state of
every agent it touched, each with a compare-and-set on that state's own revision (expected
absent when it had none). No key is written by every event: two events contend only when
they touch a common agent, so instances add capacity instead of queueing on one key. The
event's ``seq`` is its log entry's stream sequence: increasing in commit order, with gaps
(the states' messages and other keys' sit between two events). It is stored as 0 and set
on reading (``stamped``).

Why replaying the log gives the stored states: an event's commit writes every state its fold
read, each on the revision that was read. It commits only if no event touching one of its
agents committed between its reads and its commit; so the events touching an agent commit
in their stream order, each folded from the states the earlier ones left, and a replay in
``seq`` order folds each event from exactly those states (an event a state carries is in the
log before anything overwrites that state: ``skillpending.py``). The reads need no order
among themselves: a state read before another writer's commit carries the old revision, and
the compare-and-set refuses it (the fold runs again on what is read then). A fold must so
write every agent whose state it read: the service's folds write every agent the evidence
touches. The fleet's state is written by a fit's commit only, which re-folds what was
applied while it wrote (``skillfit.py``).

The previous format kept the log's last seq under ``head``, compare-and-set by every event,
and stored each event with its seq (1, 2, ...). Such a bucket keeps working: an event that
carries a seq keeps it (the old events were written in seq order, each at a stream sequence
at least its seq, so every newer event's stream sequence is above them all and the log stays
ordered), and a fit's ``seq`` of that time still names the same event. On opening, the head
is set to a fit held for ever (``fence``), so an instance of the previous version still
running gets a conflict on every skill write instead of appending events whose seqs would
run out of order; upgrade every instance together.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.domain.frozen import replaced
from agentladder.domain.skill.state import AGENT_SKILL, FLEET_SKILL, AgentSkill, FleetSkill
from agentladder.errors import RevisionConflict
from agentladder.store.base import SkillItem
from agentladder.store.codec import decode, decode_as
from agentladder.store.lru import Lru
from agentladder.store.nats.batch import (
    MAX_BATCH_MESSAGES,
    BatchAck,
    BatchGate,
    BatchMessage,
    publish_atomic,
    publish_expected,
)
from agentladder.store.nats.config import claim_token
from agentladder.store.nats.io import (
    REQUEST_TIMEOUT,
    count_after,
    is_deleted,
    last_msg,
    msgs_at,
    next_msg,
    scan,
    scan_page,
)
from agentladder.store.nats.skillpending import (
    Entry,
    PendingLog,
    Repairs,
    decode_entry,
    event_bytes,
    pending_value,
    single,
)
from agentladder.store.skills import SkillApplied, SkillCommit, SkillEvent, SkillFold

__all__ = ["FENCE", "SKILL_CHUNK", "SkillKv", "stamped"]

SKILL_CHUNK = 300
"""Most events per atomic batch of ``apply_many`` (``chunks`` also keeps the events and
their agents' states under the server's 1000 messages per batch)."""
DIRECT_READS = 8
"""Events ``SkillKv.events`` fetches one by one before it reads the rest through a consumer."""
PARALLEL_READS = 64
"""Most stream messages ``SkillKv.events_since`` reads at once (beyond: ``events``' pages)."""
YIELD_EVERY = 8
"""``apply_many`` lets the event loop run other work after every this many folds (a fold
is pure CPU: a batch of the skill queue's applier would hold the loop for tens of ms)."""
FENCE = {"seq": 0, "fit_until": 1e18, "format": "per-agent"}
"""The previous format's head as this one leaves it: held by a fit for ever."""


def stamped(data: bytes, subject: str, stream_seq: int) -> SkillEvent:
    """The event a message holds, its ``seq`` its stream sequence unless it carries one
    (written by the previous format)."""
    event = decode(SkillEvent, data, subject)
    return event if event.seq else replaced(event, seq=stream_seq)


def chunks(items: Sequence[SkillItem]) -> list[Sequence[SkillItem]]:
    """``items`` cut in runs of at most ``SKILL_CHUNK`` events whose batch (each event and
    each distinct agent's state once) stays within the server's limit."""
    out: list[Sequence[SkillItem]] = []
    start, agents = 0, set[str]()
    for index, (_, touched, _) in enumerate(items):
        grown = agents | set(touched)
        if index > start and (
            index - start >= SKILL_CHUNK or index - start + 1 + len(grown) > MAX_BATCH_MESSAGES
        ):
            out.append(items[start:index])
            start, grown = index, set(touched)
        agents = grown
    if start < len(items):
        out.append(items[start:])
    return out


@dataclass(frozen=True, slots=True)
class Read:
    """Agents' states as read, with the revision each was read at (0: absent), and the
    events the states carry (maybe not in the log yet: ``skillpending.py``)."""

    states: dict[str, AgentSkill]
    revisions: dict[str, int]
    pending: dict[str, SkillEvent] = field(default_factory=dict)
    fleets: dict[str, int] = field(default_factory=dict)
    """The revision of the fleet's state the event a state carries was folded with."""

    def place(self, agent: str, revision: int, entry: Entry) -> None:
        """``agent``'s decoded value, read at ``revision``, in its place."""
        self.revisions[agent] = revision
        if entry.state is not None:
            self.states[agent] = entry.state
        if entry.event is not None:
            self.pending[agent] = entry.event
        if entry.fleet is not None:
            self.fleets[agent] = entry.fleet


class SkillKv:
    """The skill log and states of one NATS store."""

    def __init__(self, nc: Client, js: JetStreamContext, kv: KeyValue, bucket: str) -> None:
        self.nc = nc
        self.batches = BatchGate()  # its stream's atomic batches open at once
        self.js = js
        self.kv = kv
        self.bucket = bucket
        self.pre = f"$KV.{bucket}."
        self.stream = f"KV_{bucket}"
        self.pending = PendingLog(nc, self.pre)
        self._fleet: tuple[int, FleetSkill] | None = None  # the last fleet decoded, by revision
        self._kept: Lru[str, tuple[int, Entry]] = Lru()  # agents' states decoded, by revision
        self.repairs = Repairs(self.repair)  # at opening, in the background

    async def get(self, key: str) -> tuple[bytes, int] | None:
        """A key's value and revision, None when absent or deleted."""
        try:
            entry = await self.kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        return entry.value or b"", int(entry.revision or 0)

    async def fence(self) -> None:
        """Leave the previous format's head held for ever (see the module's docstring)."""
        found = await self.get("head")
        if found is not None and json.loads(found[0]).get("format") == FENCE["format"]:
            return
        message = BatchMessage(
            f"{self.pre}head", json.dumps(FENCE).encode(), 0 if found is None else found[1]
        )
        # another instance fenced it meanwhile (or an old one moved it: fenced at next open)
        with contextlib.suppress(RevisionConflict):
            await publish_expected(self.nc, message, timeout=REQUEST_TIMEOUT)

    async def get_event(self, key: str) -> SkillEvent | None:
        """The event applied under ``key``."""
        token = claim_token(key)
        found = await self.get(f"e.{token}")
        if found is None:
            return None
        return stamped(found[0], f"{self.bucket}/e.{token}", found[1])

    async def _entry(self, agent: str) -> tuple[bytes | None, int]:
        """An agent's state value (None: absent or deleted) and its revision (a deleted
        one's is its delete marker's, which a compare-and-set must name)."""
        try:
            entry = await self.kv.get(f"a.{agent}")
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError) as absent:
            return None, int(getattr(absent.entry, "revision", 0) or 0)  # entry: a marker
        return entry.value or b"", int(entry.revision or 0)

    def _decoded(self, found: dict[str, tuple[bytes | None, int]], *, kept: bool = False) -> Read:
        """The values as ``Read``; with ``kept``, a value of the revision this process last
        wrote or decoded for its agent is not decoded again (``_kept``)."""
        read = Read({}, {})
        for agent, (data, revision) in found.items():
            read.revisions[agent] = revision
            if data is None:
                continue
            known = self._kept.get(agent) if kept else None
            if known is not None and known[0] == revision:
                entry = known[1]
            else:
                entry = decode_entry(data, f"{self.bucket}/a.{agent}")
                if kept:
                    self._kept.put(agent, (revision, entry))
            read.place(agent, revision, entry)
        return read

    async def read(self, agent_ids: Collection[str]) -> Read:
        """The states of ``agent_ids`` (fetched at once) and the revisions they were read at."""
        wanted = list(dict.fromkeys(agent_ids))
        found = await asyncio.gather(*(self._entry(a) for a in wanted))
        return self._decoded(dict(zip(wanted, found, strict=True)), kept=True)

    async def _read_kept(self, agent_ids: Collection[str]) -> Read:
        """``read``, but an agent whose state this process wrote or read last (``_kept``)
        is not read again: its kept state and revision are used, and the compare-and-set
        on that revision refuses the write if another writer moved it since (the retry then
        reads every state). The skill queue's applier writes its shard's agents' states in
        batches, one after the other: read each time, they cost a request per agent."""
        wanted = list(dict.fromkeys(agent_ids))
        kept = {agent: self._kept.get(agent) for agent in wanted}
        read = await self.read([agent for agent, known in kept.items() if known is None])
        for agent, known in kept.items():
            if known is None:
                continue
            read.place(agent, *known)
        return read

    async def get_states(self, agent_ids: Collection[str]) -> dict[str, AgentSkill]:
        """The states of those of ``agent_ids`` that have one (fetched at once)."""
        return (await self.read(agent_ids)).states

    async def fleet(self) -> FleetSkill:
        """The fleet's state (read each time; decoded again only when its revision moved)."""
        return (await self.fleet_entry())[1]

    async def fleet_entry(self) -> tuple[int, FleetSkill]:
        """The fleet's state and its revision (0: none yet), read; kept as the last known."""
        found = await self.get("fleet")
        if found is None:
            return self.known_fleet(0, FleetSkill())
        cached = self._fleet
        if cached is not None and cached[0] == found[1]:
            return cached
        return self.known_fleet(found[1], decode_as(FLEET_SKILL, found[0], "fleet"))

    def known_fleet(self, revision: int, fleet: FleetSkill) -> tuple[int, FleetSkill]:
        """Keep the fleet's state at ``revision`` as the last known (unless a newer one is
        known already: revisions only grow); the one kept."""
        if self._fleet is None or self._fleet[0] < revision:
            self._fleet = (revision, fleet)
        return self._fleet if self._fleet[0] == revision else (revision, fleet)

    async def _fleet_for(self, read: Read, agent: str) -> tuple[int, FleetSkill]:
        """The fleet's state a single event of ``agent`` folds with: the one kept, without a
        request, when the agent's state carries an event folded with that very revision;
        else read now (after the agent's state). Why a kept fleet older than the stored one
        still folds as a replay does: ``docs/storage-nats.md``, "Skill evidence"."""
        cached = self._fleet
        if cached is not None and read.fleets.get(agent) == cached[0]:
            return cached
        return await self.fleet_entry()

    def _states(self, read: Read, written: dict[str, AgentSkill]) -> list[BatchMessage]:
        """Every state read, on its revision: the new value where the fold wrote one, the
        same again where it left it (so that its compare-and-set still guards the read)."""
        out = [
            BatchMessage(
                f"{self.pre}a.{agent}", AGENT_SKILL.dump_json(state), read.revisions.get(agent, 0)
            )
            for agent, state in written.items()
        ]
        out.extend(
            BatchMessage(
                f"{self.pre}a.{agent}", AGENT_SKILL.dump_json(state), read.revisions[agent]
            )
            for agent, state in read.states.items()
            if agent not in written
        )
        return out

    async def publish(self, messages: list[BatchMessage]) -> BatchAck:
        """One atomic batch on the bucket's stream, once the gate lets it open."""
        return await publish_atomic(self.nc, messages, timeout=REQUEST_TIMEOUT, gate=self.batches)

    def _event_message(self, event: SkillEvent) -> BatchMessage:
        data = replaced(event, seq=0).model_dump_json().encode()
        return BatchMessage(f"{self.pre}e.{claim_token(event.key)}", data, 0)

    async def _pending_key(self, read: Read, key: str) -> SkillEvent | None:
        """Write the log entries of the events the states read carry; the one of ``key``
        among them, as stored, if it is one."""
        await self.pending.write(read.pending.values())
        if any(event.key == key for event in read.pending.values()):
            return await self.get_event(key)
        return None

    async def apply(self, key: str, agents: Sequence[str], fold: SkillFold) -> SkillApplied:
        """Read, fold and commit one event (``skillpending.single``: two publishes, else
        one batch); ``RevisionConflict`` when an event touching one of its agents committed
        meanwhile (the caller retries)."""
        if single(key, agents):
            return await self._apply_single(key, agents[0], fold)
        stored = await self.get_event(key)
        if stored is not None:
            return SkillApplied(stored, created=False)
        read, fleet = await asyncio.gather(self.read(agents), self.fleet())
        stored = await self._pending_key(read, key)
        if stored is not None:
            return SkillApplied(stored, created=False)
        return await self._commit_batch(key, read, fold(read.states, fleet))

    async def _commit_batch(self, key: str, read: Read, commit: SkillCommit) -> SkillApplied:
        messages = [self._event_message(commit.event), *self._states(read, commit.agents)]
        try:
            ack = await self.publish(messages)
        except RevisionConflict:
            stored = await self.get_event(key)
            if stored is not None:  # another instance applied this very key
                return SkillApplied(stored, created=False)
            raise
        return SkillApplied(replaced(commit.event, seq=ack.seq - ack.count + 1), created=True)

    async def _apply_single(self, key: str, agent: str, fold: SkillFold) -> SkillApplied:
        """The agent's state (compare-and-set, carrying the event), then the event's log
        entry. The state is read before the key is looked up (``skillpending.py``)."""
        read = await self.read([agent])
        carried = read.pending.get(agent)
        if carried is not None and carried.key == key:  # applied; maybe not in the log yet
            await self.pending.write([carried])
            stored = await self.get_event(key)
            return SkillApplied(stored or carried, created=False)
        stored, (revision, fleet), _ = await asyncio.gather(
            self.get_event(key),
            self._fleet_for(read, agent),
            self.pending.write([carried] if carried else []),
        )
        if stored is not None:
            return SkillApplied(stored, created=False)
        commit = fold(read.states, fleet)
        state = commit.agents.get(agent)
        if state is None or len(commit.agents) != 1:  # not a one-agent change: the batch
            return await self._commit_batch(key, read, commit)
        data = event_bytes(commit.event)
        value = pending_value(AGENT_SKILL.dump_json(state), data, revision)
        message = BatchMessage(f"{self.pre}a.{agent}", value, read.revisions[agent])
        written = await publish_expected(self.nc, message, timeout=REQUEST_TIMEOUT)
        self._kept.put(agent, (written, Entry(state, commit.event, revision)))
        return SkillApplied(await self.log_event(commit.event, data), created=True)

    async def log_event(self, event: SkillEvent, data: bytes | None = None) -> SkillEvent:
        """Write the log entry of an event whose state is committed (``data``: its bytes,
        ``event_bytes``, when known); the event as stored (a writer of the agent's state
        after it may have written the entry first)."""
        seq = await self.pending.entry(event, data)
        if seq is not None:
            return replaced(event, seq=seq)
        stored = await self.get_event(event.key)
        return event if stored is None else stored

    async def repair(self) -> int:
        """Write the log entries of the events that states carry and the log lacks (their
        writer died between its two publishes); how many it looked at.

        Only the states written since the last repair's start (``repaired``: the stream's
        last sequence then) are looked at: every state at or below it that is still its
        agent's last was looked at then, and a state replaced since had its event put in
        the log by whoever replaced it."""
        found = await self.get("repaired")
        done = 0 if found is None else int(json.loads(found[0]).get("seq", 0))
        start = (await self.js.stream_info(self.stream)).state.last_seq
        read = await self.scan_states()
        todo = [e for agent, e in read.pending.items() if read.revisions[agent] > done]
        await self.pending.write(todo)
        value = json.dumps({"seq": start}).encode()
        message = BatchMessage(f"{self.pre}repaired", value, 0 if found is None else found[1])
        with contextlib.suppress(RevisionConflict):  # another instance's repair meanwhile
            await publish_expected(self.nc, message, timeout=REQUEST_TIMEOUT)
        return len(todo)

    async def apply_many(
        self, items: Sequence[SkillItem], *, look_up: bool = True
    ) -> list[SkillApplied]:
        """Read, fold and commit the events of ``items`` (one of ``chunks``) in one atomic
        batch, each its own event (expected absent), the states they touch written once
        each on the revision read; ``RevisionConflict`` when an event touching one of them
        committed meanwhile, or (``look_up`` false: keys taken as new without asking)
        when one of the keys was there (the caller retries the whole chunk)."""
        keys = list(dict.fromkeys(key for key, _, _ in items))
        known: dict[str, SkillEvent] = {}
        if look_up:
            found = await asyncio.gather(*(self.get_event(key) for key in keys))
            known = {k: event for k, event in zip(keys, found, strict=True) if event is not None}
        touched = list(dict.fromkeys(agent for _, agents, _ in items for agent in agents))
        if look_up:
            read, fleet = await asyncio.gather(self.read(touched), self.fleet())
        else:
            read, fleet = await asyncio.gather(self._read_kept(touched), self.fleet())
        await self.pending.write(read.pending.values())
        carried = {e.key for e in read.pending.values()} & set(keys) - set(known)
        for key in carried:  # applied by a single event whose entry was not yet in the log
            stored = await self.get_event(key)
            if stored is not None:
                known[key] = stored
        states = dict(read.states)
        changed: dict[str, AgentSkill] = {}
        events: list[SkillEvent] = []
        position: dict[str, int] = {}  # a new key's index among ``events``
        for index, (key, agents, fold) in enumerate(items):
            if key in known or key in position:
                continue
            if index % YIELD_EVERY == YIELD_EVERY - 1:  # the loop's other work meanwhile
                await asyncio.sleep(0)
            commit = fold({a: states[a] for a in agents if a in states}, fleet)
            position[key] = len(events)
            events.append(commit.event)
            states.update(commit.agents)
            changed.update(commit.agents)
        if events:
            messages = [self._event_message(event) for event in events]
            messages.extend(self._states(read, changed))
            ack = await self.publish(messages)
            first = ack.seq - ack.count + 1
            events = [replaced(event, seq=first + i) for i, event in enumerate(events)]
            for index, agent in enumerate(
                list(changed) + [a for a in read.states if a not in changed]
            ):
                state = changed.get(agent) or read.states[agent]
                self._kept.put(agent, (first + len(events) + index, Entry(state)))
        out: list[SkillApplied] = []
        returned: set[str] = set()
        for key, _, _ in items:
            if key in known:
                out.append(SkillApplied(known[key], created=False))
            else:  # a key repeated within the items: created the first time only
                out.append(SkillApplied(events[position[key]], created=key not in returned))
                returned.add(key)
        return out

    async def list_states(self) -> list[AgentSkill]:
        """Every agent's state, by agent id."""
        return list((await self.scan_states()).states.values())

    async def scan_states(self) -> Read:
        """Every agent's state with its revision (one pass over the stream), by agent id;
        an undecodable legacy state has its revision and no state."""
        messages = await scan(self.js, self.stream, f"{self.pre}a.>", last_per_subject=True)
        found: dict[str, tuple[bytes | None, int]] = {
            msg.subject.removeprefix(f"{self.pre}a."): (
                None if is_deleted(msg) else msg.data,
                msg.metadata.sequence.stream,
            )
            for msg in messages
        }
        return self._decoded(dict(sorted(found.items())))

    async def events_since(self, after: int) -> list[SkillEvent]:
        """Every event with ``seq`` above ``after``, in order, in a time that does not grow
        with their number while they are few: the last event's stream sequence (one
        request), then every message up to it at once (``msgs_at``; the states' messages
        among them are left out); beyond ``PARALLEL_READS`` messages, ``events``' pages.
        A fit's commit reads them between reading states and writing them: read one after
        another, the events written meanwhile lengthened that time, which let more be
        written, until the writers' compare-and-sets won every time (``skillfit.py``)."""
        last = await last_msg(self.js, self.stream, f"{self.pre}e.>")
        end = 0 if last is None else int(last.seq or 0)
        if end <= after:
            return []
        if end - after > PARALLEL_READS:
            out: list[SkillEvent] = []
            while page := await self.events(after, 1000):
                out.extend(page)
                after = page[-1].seq
            return out
        found = (
            stamped(msg.data or b"", msg.subject or "", int(msg.seq or 0))
            for msg in await msgs_at(self.js, self.stream, max(1, after + 1), end)
            if (msg.subject or "").startswith(f"{self.pre}e.")
        )
        return [event for event in found if event.seq > after]

    async def count_events(self, after: int) -> int:
        """How many events the log holds past ``after``: its entries at stream sequences
        above it (an event's seq is its entry's stream sequence), counted by the server.
        An entry of the previous format keeps its own seq, at most its stream sequence:
        until a fit reads past the first event of this format, such an entry above
        ``after`` but whose seq is not may be counted."""
        return await count_after(self.js, self.stream, f"{self.pre}e.>", after)

    async def events(self, after: int, limit: int) -> list[SkillEvent]:
        """Up to ``limit`` events with ``seq`` above ``after``, in order. An event's seq is
        at most its stream sequence (equal but for the previous format's), so none at or
        below stream sequence ``after`` is wanted: the read starts after it and skips the
        previous format's events whose seq is not above ``after``. The first
        ``DIRECT_READS`` are fetched one by one (a request each: a fit's commit reads the
        few events written since its last read between reading states and writing them,
        and an ephemeral consumer's four round trips there made the states it writes
        older than the writers' next ones); the rest through one consumer."""
        out: list[SkillEvent] = []
        start = max(1, after + 1)
        for _ in range(min(limit, DIRECT_READS)):
            found = await next_msg(self.js, self.stream, f"{self.pre}e.>", start)
            if found is None:
                return out  # one request when there is nothing newer (a poller's usual case)
            seq = found.seq or start
            event = stamped(found.data or b"", found.subject or "", seq)
            if event.seq > after:
                out.append(event)
            start = seq + 1
        while len(out) < limit:
            want = limit - len(out)
            messages = await scan_page(
                self.js, self.stream, f"{self.pre}e.>", start=start, limit=want
            )
            for msg in messages:
                event = stamped(msg.data, msg.subject, msg.metadata.sequence.stream)
                if event.seq > after:
                    out.append(event)
            if len(messages) < want:
                break
            start = messages[-1].metadata.sequence.stream + 1
        return out
