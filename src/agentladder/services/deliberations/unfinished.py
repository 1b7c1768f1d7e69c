"""Deliberations that did not complete: interrupted by a stop of the service, past their
deadline, failed by an error, or left by an instance that died.

None of them promotes or judges anyone: the work did not finish. What did happen is kept:
the calls made (their submissions: tasks completed or failed, latencies) are folded into
the stats once (``apply_calls``), the cost of the calls that answered is recorded, and the
judgments and skill evidence end ``abandoned`` with the reason, so that no side effect of a
failed deliberation stays ``pending`` for good. A deliberation left by an instance that
died (recovery finds it) has none of its calls recorded: its side effects are abandoned.
"""

from __future__ import annotations

from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    DeliberationStatus,
    SideEffect,
    SideEffectState,
)
from agentladder.redaction import scrub
from agentladder.services.deliberations.rounds import RoundRunner
from agentladder.services.deliberations.side_effects import apply_calls, with_backoff
from agentladder.store.base import Store
from agentladder.store.retry import WriteTally

__all__ = ["abandon", "abandon_all", "failed_with_calls", "settle_unfinished"]


def abandon(effect: SideEffect, why: str) -> None:
    """``effect`` will never be applied, because ``why``."""
    if effect.state is not SideEffectState.APPLIED:
        effect.state = SideEffectState.ABANDONED
        effect.error = why


def abandon_all(record: DeliberationRecord, why: str) -> None:
    """Every side effect of ``record`` abandoned: nothing of it was recorded."""
    for effect in (record.ranking, record.judgments, record.skill):
        abandon(effect, why)


def failed_with_calls(record: DeliberationRecord, error: str, runner: RoundRunner | None) -> None:
    """``record`` failed with ``error``: keeps the calls ``runner`` made and what the ones
    that answered cost (also those of the round it stopped in)."""
    record.status = DeliberationStatus.FAILED
    record.error = scrub(error)  # a failure's text: no secret (redaction.py)
    if runner is not None:
        record.submissions = list(runner.submissions)
        record.agent_costs = dict(runner.spent)
        record.total_cost = sum(runner.spent.values())


async def settle_unfinished(
    store: Store,
    record: DeliberationRecord,
    now: int,
    *,
    max_attempts: int | None = None,
    tally: WriteTally | None = None,
) -> None:
    """The side effects of a failed deliberation: its calls into the stats (retried with
    back-off, at most ``max_attempts`` times when given), its judgments and skill
    evidence abandoned."""
    why = record.error or "the deliberation failed"
    if record.submissions:

        async def calls() -> None:
            await apply_calls(store, record, now, why, tally)

        await with_backoff(
            f"calls of {record.id}",
            record.ranking,
            calls,
            kind="calls",
            tally=tally,
            max_attempts=max_attempts,
        )
    else:
        abandon(record.ranking, f"nothing to rank: no call was made ({why})")
    if record.ranking.state is SideEffectState.APPLIED and record.ranking.explanation is None:
        record.ranking.explanation = f"nobody promoted: {why}"
    abandon(record.judgments, f"nobody judged: the deliberation did not complete ({why})")
    abandon(record.skill, f"no skill evidence: the deliberation did not complete ({why})")
