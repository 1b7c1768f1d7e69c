"""After a crash or a restart: finish what the stopped service acknowledged but left undone.

A deliberation is acknowledged once its record is stored. What may be left undone when a
service is killed:

- a completed deliberation (run here or reported with ``POST /deliberations/results``)
  whose ranking update or Oracle judgments were not applied yet: stored as ``settling``,
  resumed here. Both side effects are idempotent (the ranking commit is marked with the
  deliberation id, each judgment has its contract id), so resuming one that another
  instance is also applying counts it once;
- a deliberation stored as queued or running that no instance runs any more: marked failed
  ("interrupted") as soon as the lease of the instance that ran it has run out
  (``services/lease.py``); a record that names no instance (stored before leases existed)
  only once it is older than the longest a deliberation can run.

``serve`` runs :func:`recover` at start and then every ``recover_interval_s``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agentladder.domain.deliberation_record import DeliberationRecord, DeliberationStatus
from agentladder.domain.text import STORED
from agentladder.services.deliberations.orchestrator import SETTLING, Orchestrator
from agentladder.store.records import DeliberationDoc

__all__ = ["Recovered", "longest_run_s", "recover"]

log = logging.getLogger(__name__)
PAGE = 500
UNFINISHED = (DeliberationStatus.QUEUED.value, DeliberationStatus.RUNNING.value)


@dataclass(frozen=True)
class Recovered:
    """What one recovery pass did."""

    resumed: int = 0
    interrupted: int = 0


def longest_run_s(orchestrator: Orchestrator, max_attempts: int = 10) -> float:
    """The longest a deliberation can run: every round's proposals and evaluations, each
    call retried up to ``max_attempts`` times, each attempt up to the timeout."""
    rounds = max(orchestrator.settings.scope_rounds.values(), default=1)
    longest = rounds * 2 * max_attempts * orchestrator.timeout_s
    limit = orchestrator.settings.deliberation_timeout_s
    return longest if limit is None else min(longest, limit)


async def _unsettled(orchestrator: Orchestrator) -> list[DeliberationDoc]:
    found: list[DeliberationDoc] = []
    statuses = (SETTLING, *UNFINISHED)
    while True:
        page = await orchestrator.store.list_deliberations(
            limit=PAGE, offset=len(found), statuses=statuses
        )
        found.extend(page)
        if len(page) < PAGE:
            return found


async def recover(orchestrator: Orchestrator, *, now: float, grace_s: float = 60.0) -> Recovered:
    """One pass: resume pending side effects, interrupt abandoned deliberations."""
    resumed = interrupted = 0
    stale_before = now - longest_run_s(orchestrator) - grace_s
    unsettled = await _unsettled(orchestrator)
    live = await orchestrator.store.live_leases(now) if unsettled else frozenset()
    for doc in unsettled:
        if orchestrator.running(doc.id):
            continue
        record = DeliberationRecord.model_validate(doc.body, context=STORED)
        if doc.status == SETTLING:
            if orchestrator.resume(record):
                resumed += 1
            continue
        runner = record.runner
        if runner not in (None, orchestrator.instance_id) and runner not in live:
            reason = f"instance {runner} stopped before finishing it (its lease ran out)"
        elif (record.started_at or record.created_at) < stale_before:
            reason = "no instance finished it in time (restarted?)"
        else:
            continue
        await orchestrator.interrupt(record, reason)
        interrupted += 1
    if resumed or interrupted:
        log.warning(
            "recovery: resumed the side effects of %d deliberation(s), interrupted %d",
            resumed, interrupted,
        )  # fmt: skip
    return Recovered(resumed, interrupted)
