"""A skill fit's commit on NATS, holding nothing the events need.

The fit read the log up to seq S and fitted it; its ``FitFold`` folds the events after S
onto the fit's states, in seq order, as a replay does. The commit:

1. takes the bucket's ``fit`` key (a compare-and-set naming it taken for ``FIT_LOCK_S``),
   so that one fit commits at a time across instances: two interleaved would leave states
   of two fits. Another instance's commit under way: ``RevisionConflict``, not retried
   (the next pass fits again);
2. writes the fleet's state first, its fit's ``rules`` left empty: events from then on
   read the new fit's fleet, and a fleet naming no rules is fitted again by the next fit
   pass (``SkillService.fit``), should this commit not end;
3. writes every agent's state in chunks of ``SKILL_CHUNK``: for each chunk it reads the
   agents' revisions, then the events after S, folds, and writes the chunk as one atomic
   batch, each state a compare-and-set on the revision read (a state the fit does not give
   is deleted the same way). An event a state carries that is not in the log yet (its
   writer died between its two publishes, ``skillpending.py``) is written to the log
   between the read and the fold, so the fold has it. An event touching one of the
   agents after the revisions were read has changed its revision, so the chunk is
   refused, and written again in halves (an agent alone retried with
   ``retry_on_conflict``; counted as ``skill_fit``). The events written since the last
   read are read at once (``SkillKv.events_since``), so that the time a chunk's states
   stand read and unwritten does not grow with the events written in it. Events are
   never held: they commit between the chunks, or make a chunk retry;
4. repairs: every state is marked with the fit its inputs came from (``AgentSkill.fit``,
   ``services/skill/fitting.py``: ``stamped``). An event that read the new fleet with a
   state this commit had not written yet marks what it writes ``STALE``; it committed
   before that state's chunk (else its compare-and-set failed), so before this step. An
   event that read the previous fleet read states no chunk had written yet, and every one
   of them is written after it (or it fails its compare-and-set), folded with it. So one
   pass over every state finds the ones to write again (not marked with this fit); a
   repair can leave new marks only on an event that read a state before its repair and
   committed before it, so passes repeat until one finds none (at most
   ``REPAIR_PASSES``);
5. writes the fleet's state again, whole, and lets go of the ``fit`` key.

A chunk that keeps conflicting (``CHUNK_ATTEMPTS``), or repairs that never end, stop the
commit with a warning: the states are then partly this fit's, ``oracle verify`` names
those that no replay gives, and the next fit (which runs, as the log has events after the
last fit's seq, or its seq is older) writes them all again. A crash in the middle leaves
the same (the fleet naming no rules makes the next fit run). One case escapes the
repairs: an event that read the previous fleet and only agents without a state (nothing
for a chunk to move under it), and whose commit took longer than all the chunks; it is
after the fit's seq, so the next fit pass runs and writes its agents again.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence

from agentladder.domain.skill.state import AGENT_SKILL, FLEET_SKILL, FleetSkill, replace
from agentladder.errors import RevisionConflict
from agentladder.store.nats.batch import BatchMessage, publish_expected
from agentladder.store.nats.io import REQUEST_TIMEOUT
from agentladder.store.nats.skills import SKILL_CHUNK, SkillKv
from agentladder.store.retry import WriteTally, retry_on_conflict
from agentladder.store.skills import FitFold, SkillEvent, SkillFitCommit

__all__ = ["CHUNK_ATTEMPTS", "FIT_LOCK_S", "REPAIR_PASSES", "commit_fit"]

log = logging.getLogger(__name__)

FIT_LOCK_S = 120.0
"""How long one instance's fit commit keeps others from committing theirs (a commit cut by
a crash frees it after that)."""
CHUNK_ATTEMPTS = 100
"""Attempts of one chunk before the commit stops (``retry_on_conflict``'s back-off)."""
REPAIR_PASSES = 20
"""Passes of step 4 before the commit stops."""
_DELETE = {"KV-Operation": "DEL"}
OP = "skill_fit"


class _Commit:
    """One fit's commit, and the events after its seq as read so far."""

    def __init__(self, kv: SkillKv, seq: int, fold: FitFold, tally: WriteTally) -> None:
        self.kv = kv
        self.seq = seq
        self.fold = fold
        self.tally = tally
        self.newer: list[SkillEvent] = []

    async def folded(self) -> SkillFitCommit:
        """The fit's states with every event after its seq folded on (read on from where
        the last call stopped)."""
        self.newer.extend(
            await self.kv.events_since(self.newer[-1].seq if self.newer else self.seq)
        )
        return self.fold(self.newer)

    async def _attempt(self, agents: Sequence[str]) -> None:
        """Read the events, the agents' revisions, then the events written meanwhile,
        fold, and write them in one batch: the events read before the revisions keep the
        time between reading a state and writing it short (a few requests), where a
        writer's next compare-and-set would otherwise win each time."""
        await self.folded()
        read = await self.kv.read(agents)
        # events their states carry go into the log before the states are overwritten
        # (``skillpending.py``), so the fold below reads them among the newer events
        await self.kv.pending.write(read.pending.values())
        commit = await self.folded()
        messages: list[BatchMessage] = []
        for agent in agents:
            subject, revision = f"{self.kv.pre}a.{agent}", read.revisions[agent]
            state = commit.agents.get(agent)
            if state is not None:
                messages.append(BatchMessage(subject, AGENT_SKILL.dump_json(state), revision))
            elif revision:
                messages.append(BatchMessage(subject, b"", revision, _DELETE))
        if len(messages) == 1:  # alone it needs no batch (nor the disk sync of its commit)
            await publish_expected(self.kv.nc, messages[0], timeout=REQUEST_TIMEOUT)
        elif messages:
            await self.kv.publish(messages)

    async def write(self, agents: Sequence[str]) -> None:
        """One chunk; on a conflict, each half of it again (an agent alone is retried with
        ``retry_on_conflict``, at most ``CHUNK_ATTEMPTS`` times): a chunk of agents that
        evidence keeps moving would otherwise never find all of them unmoved at once."""
        if len(agents) == 1:
            await retry_on_conflict(
                lambda: self._attempt(agents), op=OP, tally=self.tally, attempts=CHUNK_ATTEMPTS
            )
            return
        self.tally.attempts[OP] += 1
        try:
            await self._attempt(agents)
        except RevisionConflict:
            self.tally.conflicts[OP] += 1
            half = len(agents) // 2
            await self.write(agents[:half])
            await self.write(agents[half:])

    async def write_all(self, agents: Sequence[str]) -> None:
        """``write`` in chunks of ``SKILL_CHUNK``."""
        for start in range(0, len(agents), SKILL_CHUNK):
            await self.write(agents[start : start + SKILL_CHUNK])

    async def _put_fleet(self, fleet: FleetSkill) -> None:
        message = BatchMessage(f"{self.kv.pre}fleet", FLEET_SKILL.dump_json(fleet))
        revision = await publish_expected(self.kv.nc, message, timeout=REQUEST_TIMEOUT)
        self.kv.known_fleet(revision, fleet)

    async def run(self) -> None:
        """Steps 2 to 5 of the module's docstring."""
        present = await self.kv.scan_states()
        first = await self.folded()
        fleet = first.fleet
        if fleet.fit is not None:  # begun: a fleet naming no rules is fitted again
            await self._put_fleet(replace(fleet, fit=replace(fleet.fit, rules="")))
        await self.write_all(sorted(set(present.revisions) | set(first.agents)))
        mark = fleet.fit.seq if fleet.fit is not None else 0
        for _ in range(REPAIR_PASSES):
            now = await self.kv.scan_states()
            stale = [agent for agent, state in now.states.items() if state.fit != mark]
            if not stale:
                await self._put_fleet(fleet)
                return
            await self.write_all(stale)
        raise RevisionConflict(f"{self.kv.pre}a.*", None, None)


async def _take(kv: SkillKv) -> int:
    """Take the ``fit`` key; its revision. ``RevisionConflict`` while another holds it."""
    found = await kv.get("fit")
    if found is not None and float(json.loads(found[0]).get("until", 0)) > time.time():
        raise RevisionConflict(f"{kv.pre}fit", found[1], found[1])
    value = json.dumps({"until": time.time() + FIT_LOCK_S}).encode()
    message = BatchMessage(f"{kv.pre}fit", value, 0 if found is None else found[1])
    return await publish_expected(kv.nc, message, timeout=REQUEST_TIMEOUT)


async def commit_fit(kv: SkillKv, seq: int, fold: FitFold, tally: WriteTally) -> None:
    """Commit a fit of the log up to ``seq`` (the module's docstring); ``RevisionConflict``
    when another instance's commit is under way."""
    taken = await _take(kv)
    commit = _Commit(kv, seq, fold, tally)
    try:
        await commit.run()
    except RevisionConflict:
        log.warning(
            "the skill fit of the log up to seq %d stopped: its states kept conflicting with"
            " evidence written meanwhile (%d events after it); the states are partly this"
            " fit's until the next fit writes them again",
            seq,
            len(commit.newer),
        )
    finally:
        release = BatchMessage(f"{kv.pre}fit", json.dumps({"until": 0}).encode(), taken)
        try:
            await publish_expected(kv.nc, release, timeout=REQUEST_TIMEOUT)
        except Exception:  # it runs out by itself; nothing else to do
            log.warning("could not let go of the skill fit key: it runs out in %.0f s", FIT_LOCK_S)
