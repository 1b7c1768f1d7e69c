"""The evidence model's log and states in the JetStream KV bucket ``<prefix>_skills``.

Keys: ``head`` (the log's last seq), ``a.<agent_id>`` (an agent's state), ``fleet`` (the
fleet's), ``e.<token>`` (the event of one key; token: ``claim_token``). One event is one
atomic batch: the event (expected absent: once per key), the head (compare-and-set on its
revision: one log, in one order, whatever the number of instances), the states it
changes. The events' stream order is their ``seq`` order.

The head is read before the states a fold starts from, never beside them: a batch is
atomic, so states read after the head are at least as new as it, and any event
committed after the head was read moves it, so the compare-and-set fails and the fold is
retried. Read at the same time, a state could be read before another instance's commit
and the head after it; the compare-and-set would then pass and the state be written
from a stale base (replay would differ: `oracle verify` reports the agent).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Collection, Sequence

import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from agentladder.domain.frozen import replaced
from agentladder.domain.skill.state import AGENT_SKILL, FLEET_SKILL, AgentSkill, FleetSkill
from agentladder.errors import RevisionConflict
from agentladder.store.base import SkillItem
from agentladder.store.codec import decode, decode_as
from agentladder.store.nats.batch import (
    BatchGate,
    BatchMessage,
    publish_atomic,
    publish_expected,
)
from agentladder.store.nats.config import claim_token
from agentladder.store.nats.io import REQUEST_TIMEOUT, is_deleted, next_msg, scan, scan_page
from agentladder.store.skills import FitFold, SkillApplied, SkillEvent, SkillFold, decode_state

__all__ = ["FIT_HOLD_S", "SKILL_CHUNK", "SkillKv"]

FIT_HOLD_S = 30.0
"""The longest a fit holds the head to commit its states (``commit_fit``); events wait
meanwhile."""
SKILL_CHUNK = 300
"""Events per atomic batch of ``apply_many``: with the head, the fleet and one state per
event at most 602 messages, under the server's 1000."""


class SkillKv:
    """The skill log and states of one NATS store."""

    def __init__(self, nc: Client, js: JetStreamContext, kv: KeyValue, bucket: str) -> None:
        self._nc = nc
        self._batches = BatchGate()  # its stream's atomic batches open at once
        self._js = js
        self._kv = kv
        self._bucket = bucket
        self._pre = f"$KV.{bucket}."
        self._stream = f"KV_{bucket}"
        self._cursor = (0, 0)  # (event seq, stream seq) where the last page ended

    async def _get(self, key: str) -> tuple[bytes, int] | None:
        try:
            entry = await self._kv.get(key)
        except (nats.js.errors.KeyNotFoundError, nats.js.errors.KeyDeletedError):
            return None
        return entry.value or b"", int(entry.revision or 0)

    async def _head(self) -> tuple[int, int]:
        """The log's last seq and the head's revision; ``RevisionConflict`` while a fit
        holds the head to commit (see ``commit_fit``): the caller retries after it."""
        head = await self._get("head")
        if head is None:
            return 0, 0
        value = json.loads(head[0])
        until = value.get("fit_until")
        if until is not None and until > time.time():
            raise RevisionConflict(f"{self._pre}head", head[1], None)
        return int(value["seq"]), head[1]

    async def get_event(self, key: str) -> SkillEvent | None:
        """The event applied under ``key``."""
        found = await self._get(f"e.{claim_token(key)}")
        if found is None:
            return None
        return decode(SkillEvent, found[0], f"{self._bucket}/e.{claim_token(key)}")

    async def get_states(self, agent_ids: Collection[str]) -> dict[str, AgentSkill]:
        """The states of those of ``agent_ids`` that have one (fetched at once)."""
        wanted = list(dict.fromkeys(agent_ids))
        found = await asyncio.gather(*(self._get(f"a.{a}") for a in wanted))
        states = {
            agent: decode_state(item[0], f"{self._bucket}/a.{agent}")
            for agent, item in zip(wanted, found, strict=True)
            if item is not None
        }
        return {agent: state for agent, state in states.items() if state is not None}

    async def fleet(self) -> FleetSkill:
        """The fleet's state."""
        found = await self._get("fleet")
        return FleetSkill() if found is None else decode_as(FLEET_SKILL, found[0], "fleet")

    async def apply(self, key: str, agents: Sequence[str], fold: SkillFold) -> SkillApplied:
        """Read, fold and commit one batch; ``RevisionConflict`` when another event was
        appended meanwhile (the caller retries)."""
        token = claim_token(key)
        stored = await self.get_event(key)
        if stored is not None:
            return SkillApplied(stored, created=False)
        last, head_revision = await self._head()  # first: see the module's docstring
        states, fleet = await asyncio.gather(self.get_states(agents), self.fleet())
        commit = fold(states, fleet)
        event = replaced(commit.event, seq=last + 1)
        messages = [
            BatchMessage(f"{self._pre}e.{token}", event.model_dump_json().encode(), 0),
            BatchMessage(
                f"{self._pre}head", json.dumps({"seq": event.seq}).encode(), head_revision
            ),
        ]
        messages.extend(
            BatchMessage(f"{self._pre}a.{agent}", AGENT_SKILL.dump_json(state))
            for agent, state in commit.agents.items()
        )
        if commit.fleet is not None:
            messages.append(BatchMessage(f"{self._pre}fleet", FLEET_SKILL.dump_json(commit.fleet)))
        try:
            await publish_atomic(self._nc, messages, timeout=REQUEST_TIMEOUT, gate=self._batches)
        except RevisionConflict:
            stored = await self.get_event(key)
            if stored is not None:  # another instance applied this very key
                return SkillApplied(stored, created=False)
            raise
        return SkillApplied(event, created=True)

    async def apply_many(self, items: Sequence[SkillItem]) -> list[SkillApplied]:
        """Read, fold and commit up to ``SKILL_CHUNK`` events in one atomic batch, each its
        own event (expected absent) on one compare-and-set of the head; ``RevisionConflict``
        when another event was appended meanwhile (the caller retries the whole chunk)."""
        keys = list(dict.fromkeys(key for key, _, _ in items))
        found = await asyncio.gather(*(self.get_event(key) for key in keys))
        known = {key: event for key, event in zip(keys, found, strict=True) if event is not None}
        touched = list(dict.fromkeys(agent for _, agents, _ in items for agent in agents))
        last, head_revision = await self._head()  # first: see the module's docstring
        read, fleet = await asyncio.gather(self.get_states(touched), self.fleet())
        states = dict(read)
        changed: dict[str, AgentSkill] = {}
        fleet_changed = False
        out: list[SkillApplied] = []
        events: list[SkillEvent] = []
        for key, agents, fold in items:
            if key in known:
                out.append(SkillApplied(known[key], created=False))
                continue
            commit = fold({a: states[a] for a in agents if a in states}, fleet)
            last += 1
            event = replaced(commit.event, seq=last)
            known[key] = event
            events.append(event)
            states.update(commit.agents)
            changed.update(commit.agents)
            if commit.fleet is not None:
                fleet, fleet_changed = commit.fleet, True
            out.append(SkillApplied(event, created=True))
        if not events:
            return out
        messages = [
            BatchMessage(
                f"{self._pre}e.{claim_token(event.key)}", event.model_dump_json().encode(), 0
            )
            for event in events
        ]
        messages.append(
            BatchMessage(f"{self._pre}head", json.dumps({"seq": last}).encode(), head_revision)
        )
        messages.extend(
            BatchMessage(f"{self._pre}a.{agent}", AGENT_SKILL.dump_json(state))
            for agent, state in changed.items()
        )
        if fleet_changed:
            messages.append(BatchMessage(f"{self._pre}fleet", FLEET_SKILL.dump_json(fleet)))
        await publish_atomic(self._nc, messages, timeout=REQUEST_TIMEOUT, gate=self._batches)
        return out

    async def commit_fit(self, seq: int, fold: FitFold) -> None:
        """The fit's states, with the events after ``seq`` folded on, then the fleet's.

        The states take several batches, so the fit first holds the head (a
        compare-and-set marking it ``fit_until`` ``FIT_HOLD_S`` from now): events wait
        (``_head``) until the states and the fleet's are written and the head is let go
        in the last batch. Without the hold, a fleet writing evidence steadily made every
        commit lose its compare-and-set, and the states a lost commit had written were no
        replay's. ``RevisionConflict`` when an event was appended before the hold, or
        another instance's fit holds the head (the caller retries). A commit cut by a crash
        leaves the head held until ``fit_until``, and states the next fit replaces."""
        last, head_revision = await self._head()
        hold = {"seq": last, "fit_until": time.time() + FIT_HOLD_S}
        held = await publish_expected(
            self._nc,
            BatchMessage(f"{self._pre}head", json.dumps(hold).encode(), head_revision),
            timeout=REQUEST_TIMEOUT,
        )
        try:
            newer: list[SkillEvent] = []
            after = seq
            while after < last and (page := await self.events(after, 1000)):
                newer.extend(event for event in page if event.seq <= last)
                after = page[-1].seq
            commit = fold(newer)
            kept = {state.agent_id for state in await self.list_states()}
            for gone in sorted(kept - set(commit.agents)):  # replaced by nothing: removed
                await self._kv.delete(f"a.{gone}")
            states = list(commit.agents.items())
            for start in range(0, len(states), SKILL_CHUNK):
                messages = [
                    BatchMessage(f"{self._pre}a.{agent}", AGENT_SKILL.dump_json(state))
                    for agent, state in states[start : start + SKILL_CHUNK]
                ]
                await publish_atomic(
                    self._nc, messages, timeout=REQUEST_TIMEOUT, gate=self._batches
                )
            await publish_atomic(
                self._nc,
                [
                    BatchMessage(f"{self._pre}fleet", FLEET_SKILL.dump_json(commit.fleet)),
                    BatchMessage(f"{self._pre}head", json.dumps({"seq": last}).encode(), held),
                ],
                timeout=REQUEST_TIMEOUT,
                gate=self._batches,
            )
        except BaseException:
            with contextlib.suppress(Exception):  # let go of the head; else it runs out
                release = BatchMessage(f"{self._pre}head", json.dumps({"seq": last}).encode(), held)
                await publish_expected(self._nc, release, timeout=REQUEST_TIMEOUT)
            raise

    async def list_states(self) -> list[AgentSkill]:
        """Every agent's state, by agent id."""
        messages = await scan(
            self._js, f"KV_{self._bucket}", f"{self._pre}a.>", last_per_subject=True
        )
        found = {
            msg.subject.removeprefix(f"{self._pre}a."): msg.data
            for msg in messages
            if not is_deleted(msg)
        }
        states = (decode_state(found[a], f"{self._bucket}/a.{a}") for a in sorted(found))
        return [state for state in states if state is not None]

    async def events(self, after: int, limit: int) -> list[SkillEvent]:
        """The events after ``after``, in order. Events are written once each, in seq
        order, so the stream holds them sorted: the page starts where a binary search over
        stream sequences finds the first event after ``after`` (a sequential reader is
        found at once from where its last page ended), and reads ``limit`` from there."""
        start = await self._start_of(after)
        if start is None:
            return []
        messages = await scan_page(
            self._js, self._stream, f"{self._pre}e.>", start=start, limit=limit
        )
        out = [decode(SkillEvent, msg.data, msg.subject) for msg in messages]
        if messages:
            self._cursor = (out[-1].seq, messages[-1].metadata.sequence.stream)
        return [event for event in out if event.seq > after]

    async def _start_of(self, after: int) -> int | None:
        """The stream sequence of the first event after ``after`` (None: there is none)."""
        if after <= 0:
            return 1
        if self._cursor[0] == after:
            return self._cursor[1] + 1
        info = await self._js.stream_info(self._stream)
        low, high = int(info.state.first_seq or 1), int(info.state.last_seq or 0)
        found: int | None = None
        while low <= high:  # the smallest stream seq whose next event is after ``after``
            mid = (low + high) // 2
            msg = await next_msg(self._js, self._stream, f"{self._pre}e.>", mid)
            if msg is None:
                high = mid - 1
                continue
            seq = int(msg.seq or 0)
            if decode(SkillEvent, msg.data or b"", self._stream).seq > after:
                found, high = seq, mid - 1
            else:
                low = seq + 1
        return found
