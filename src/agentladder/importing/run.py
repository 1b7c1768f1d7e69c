"""The import: items from the sources, applied in batches (``services.oracle.batch``),
counted into a summary.

Batches of ``BATCH`` judgments, fewer when their lines hold over ``BATCH_BYTES`` (a
judgment's output may be a megabyte): on SQLite each batch is one transaction for the
Oracle events and their skill evidence. At the end, the skill model fits the whole
log (``SkillService.fit``), so the estimates do not depend on the order of the file.
Refused items are counted and never applied; skipped ones (a failure that was not the
agent's) are counted by reason; notes are kept for the summary. A run killed at any point
leaves whole batches applied; a re-run counts those as duplicates and applies the rest.

Before a batch is applied, each Inspect sample's agent, contract and cost are settled
against the store (``answers.settle``: the agent that answered it through the gateway,
or the agent its model names; the prices the store keeps): a sample whose answer the
gateway's check judged already is a duplicate.

The model versions the applied judgments name are gathered (``versions.Versions``): once
every batch is stored, one ``ModelChange`` per agent and version is applied before the
fit, each once by its key.

Every judgment that says no time (``observed_at``, an Inspect run's ``created``) is skill
evidence of one moment, the import's start: history has no order, and the order of a file
is not when its lines happened.

Every imported judgment is ``history`` (past work: XP as usual, no probation)
and may name a new agent (``new_agent``: an import is how a team brings agents in); the
summary lists the agents it created.

Its skill evidence is ``deferred``, as history's is (``ScoreEvidence.deferred``): stored
with its Oracle event, it moves no state until the fit at the end. An
import killed before its fit leaves the evidence waiting for the next fit (``serve``'s,
a re-run's, ``agentladder skill rebuild``); a re-run fits whenever the log has events no
fit read, even when it imports nothing new.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from pydantic import BaseModel, Field

from agentladder.domain.frozen import replaced
from agentladder.importing.answers import Settled, settle
from agentladder.importing.items import Item
from agentladder.importing.versions import Versions
from agentladder.services.oracle.batch import EvidenceSource, ItemStatus, submit_many
from agentladder.services.oracle.known import unknown_among
from agentladder.services.oracle.service import Oracle

__all__ = ["BATCH", "BATCH_BYTES", "MAX_PROBLEMS", "Problem", "Skip", "Summary", "run_import"]

BATCH = 1000
"""Judgments per batch."""
BATCH_BYTES = 16 << 20
"""The bytes of input a batch holds at most (it ends with the item that passes them)."""
CHANGES_BATCH = 300
"""Model changes applied at a time (the NATS store's atomic batch of skill evidence)."""
MAX_PROBLEMS = 1000
"""Refused and conflicting items listed in the summary (the rest are counted)."""
IMPORTED = {"history": True, "new_agent": True}
"""What an import says of each judgment: past work, of agents it may bring in."""


class Problem(BaseModel):
    """An item that was not applied: where it is and why."""

    where: str
    status: ItemStatus
    error: str


class Skip(BaseModel):
    """An entry skipped as a failure that was not the agent's: where, why, what failed."""

    where: str
    reason: str
    error: str


class Summary(BaseModel):
    """What an import did."""

    imported: int = 0
    duplicate: int = 0
    conflicting: int = 0
    refused: int = 0
    seconds: float = 0.0
    per_second: float = Field(default=0.0, description="items (of every status) per second")
    problems: list[Problem] = Field(default_factory=list)
    problems_left_out: int = Field(default=0, description="problems beyond MAX_PROBLEMS")
    new_agents: list[str] = Field(
        default_factory=list,
        description="agents the import created (unknown before it), the first MAX_PROBLEMS",
    )
    new_agents_left_out: int = Field(default=0, description="new agents beyond those listed")
    skipped: dict[str, int] = Field(
        default_factory=dict,
        description="entries skipped as failures that were not the agent's, by reason",
    )
    skips: list[Skip] = Field(default_factory=list, description="the first MAX_PROBLEMS")
    skips_left_out: int = Field(default=0, description="skips beyond those listed")
    notes: list[str] = Field(
        default_factory=list, description="what was left out of folders, eval sets, the fit"
    )
    model_versions: int = Field(
        default=0, description="model versions recorded (ModelChange evidence stored)"
    )
    through_gateway: int = Field(
        default=0,
        description="Inspect samples attributed to the agent that answered them through the"
        " gateway, by its served records (importing/answers.py)",
    )
    gateway_judged: int = Field(
        default=0,
        description="of those, the answers the gateway's check had judged already: counted"
        " as duplicates, not judged again",
    )
    unfound: int = Field(
        default=0,
        description="samples of routed runs whose answers no served record names: imported"
        " under the agent the model name makes",
    )
    unfound_where: list[str] = Field(default_factory=list, description="the first MAX_PROBLEMS")

    def skip(self, where: str, reason: str, error: str | None) -> None:
        """Count one skipped entry."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if len(self.skips) < MAX_PROBLEMS:
            self.skips.append(Skip(where=where, reason=reason, error=error or ""))
        else:
            self.skips_left_out += 1

    def settled(self, settled: Settled) -> None:
        """Count a batch's samples settled against the store (``importing/answers.py``):
        those the gateway had judged are duplicates."""
        self.through_gateway += settled.through_gateway
        for item in settled.judged:
            self.gateway_judged += 1
            self.note(item.where, ItemStatus.DUPLICATE, None)
        self.unfound += len(settled.unfound)
        room = max(0, MAX_PROBLEMS - len(self.unfound_where))
        self.unfound_where += settled.unfound[:room]

    def created(self, agent_id: str) -> None:
        """One agent the import created."""
        if len(self.new_agents) < MAX_PROBLEMS:
            self.new_agents.append(agent_id)
        else:
            self.new_agents_left_out += 1

    @property
    def items(self) -> int:
        """Every item counted, skipped ones included (notes are none)."""
        counted = self.imported + self.duplicate + self.conflicting + self.refused
        return counted + sum(self.skipped.values())

    def note(self, where: str, status: ItemStatus, error: str | None) -> None:
        """Count one item."""
        if status is ItemStatus.IMPORTED:
            self.imported += 1
            return
        if status is ItemStatus.DUPLICATE:
            self.duplicate += 1
            return
        if status is ItemStatus.CONFLICT:
            self.conflicting += 1
        else:
            self.refused += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(where=where, status=status, error=error or ""))
        else:
            self.problems_left_out += 1


Progress = Callable[[Summary], None]


async def run_import(
    oracle: Oracle,
    items: Iterable[Item],
    *,
    batch: int = BATCH,
    progress: Progress | None = None,
    fit: bool = True,
) -> Summary:
    """Apply every item (in order, ``batch`` at a time), then (``fit``) the skill model's
    fit of the whole log; the summary."""
    summary = Summary()
    started = time.perf_counter()
    moment = oracle.clock.now().timestamp()  # of every line that says no time: one set
    source = iter(items)
    seen: set[str] = set()
    versions = Versions()
    while chunk := _chunk(source, batch):
        settled = await settle(oracle.store, oracle.agents,
                               [item for item in chunk if item.request is not None])  # fmt: skip
        ready = settled.ready
        summary.settled(settled)
        for item in chunk:
            if item.note is not None:
                summary.notes.append(item.note)
            elif item.skipped is not None:
                summary.skip(item.where, item.skipped, item.error)
            elif item.request is None:
                summary.note(item.where, ItemStatus.REFUSED, item.error)
        requests = [
            replaced(item.request, **IMPORTED) for item in ready if item.request is not None
        ]
        named = {request.agent_id for request in requests} - seen
        new = await unknown_among(oracle.store, oracle.agents, named)
        seen |= named - new
        sources = [
            EvidenceSource(item.judge, moment if item.at is None else item.at) for item in ready
        ]
        outcomes = await submit_many(oracle, requests, sources)
        for item, request, outcome, evidence in zip(
            ready, requests, outcomes, sources, strict=True
        ):
            summary.note(item.where, outcome.status, outcome.error)
            applied = outcome.status in (ItemStatus.IMPORTED, ItemStatus.DUPLICATE)
            if applied and item.model_version is not None:
                at = evidence.at if request.observed_at is None else request.observed_at.timestamp()
                version, provider = item.model_version, item.provider
                versions.saw(request.agent_id, provider, version, moment if at is None else at)
            if request.agent_id in new and outcome.status is ItemStatus.IMPORTED:
                new.discard(request.agent_id)
                seen.add(request.agent_id)
                summary.created(request.agent_id)
        summary.seconds = time.perf_counter() - started
        summary.per_second = summary.items / summary.seconds if summary.seconds else 0.0
        if progress is not None:
            progress(summary)
    if oracle.skill is not None and versions.first:
        changes = versions.changes()
        for start in range(0, len(changes), CHANGES_BATCH):
            stored = await oracle.skill.observe_many(changes[start : start + CHANGES_BATCH])
            summary.model_versions += sum(1 for one in stored if one.created)
    if fit and oracle.skill is not None and await oracle.skill.needs_fit():
        await oracle.skill.fit()  # the whole history at once: its order does not count
    summary.seconds = time.perf_counter() - started
    summary.per_second = summary.items / summary.seconds if summary.seconds else 0.0
    return summary


def _chunk(source: Iterator[Item], batch: int) -> list[Item]:
    """The next items: ``batch`` of them, or fewer holding ``BATCH_BYTES``."""
    chunk: list[Item] = []
    held = 0
    for item in source:
        chunk.append(item)
        held += item.size
        if len(chunk) >= batch or held >= BATCH_BYTES:
            break
    return chunk
