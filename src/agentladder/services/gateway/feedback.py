"""A caller's feedback on an answer: ``POST /v1/feedback`` (docs/gateway.md, "Feedback").

Each answered request is recorded (``ServedBook``): its contract id, the agent that
answered, the caller (its token's name) and the task type, written to the store off the
request path, once a second for all the requests of that second, and kept
``gateway.feedback_days``; so feedback finds the agent after a restart and on another
instance. A process killed between two writes loses at most that second's records
(feedback on them is 404, as for an unknown contract).

``Feedback.give`` turns ``{"contract_id", "score" | "thumbs", "comment"}`` into an Oracle
judgment of the agent that answered, by the judge ``feedback:<caller>`` (its own learned
noise and leniency), at the request's task type (``general`` when it had none), under
the contract id ``<contract_id>:feedback`` (the request's own contract id holds its
check's judgment). ``thumbs`` up is 10, down 0 (a two-valued source, as the skill model
reads one); ``success`` when the score reaches the task type's pass score
(``gateway.judge``, else 5), so a thumbs down starts probation as a failed check does.
Only the caller that made the request may give it (an admin too); the same feedback
again is a duplicate, another score for the same contract a conflict (409), as the
Oracle treats a repeated judgment.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from agentladder.errors import InvalidInput, NotFound, Refused, StoreUnavailable
from agentladder.services.gateway.flushing import FlushLoop
from agentladder.services.gateway.judge import JudgeSettings
from agentladder.services.oracle.models import JudgmentRequest, JudgmentResult
from agentladder.services.oracle.service import Oracle
from agentladder.store.base import Store
from agentladder.store.served import ServedRequest

__all__ = ["FEEDBACK_PREFIX", "THUMBS", "Feedback", "ServedBook"]

log = logging.getLogger(__name__)

FEEDBACK_PREFIX = "feedback:"
THUMBS = {"up": 10.0, "down": 0.0}
"""A thumb's score: the ends of the scale."""
DEFAULT_PASS_SCORE = 5.0
MAX_COMMENT = 2000
MAX_PENDING = 100_000
"""The most answered requests kept unwritten (about 30 MB) while the store is down."""
_FIELDS = frozenset({"contract_id", "score", "thumbs", "comment"})


class ServedBook:
    """The answered requests, kept in memory until written to the store (every
    ``flush_s`` seconds in the background, and at the stop)."""

    def __init__(self, store: Store, keep_s: float, flush_s: float = 1.0) -> None:
        self.store = store
        self.keep_s = keep_s
        self.flush_s = flush_s
        self._pending: dict[str, ServedRequest] = {}
        self.lost = 0
        """Records dropped unwritten (the store unreachable for ``MAX_PENDING`` requests)."""
        self._loop = FlushLoop("writing the gateway's answered requests", self.flush, flush_s)

    def add(self, record: ServedRequest) -> None:
        """One request answered; written at the next flush. While the store cannot be
        written, at most ``MAX_PENDING`` are kept (the oldest then go: their contracts
        take no feedback)."""
        if len(self._pending) >= MAX_PENDING:
            del self._pending[next(iter(self._pending))]
            self.lost += 1
        self._pending[record.contract_id] = record

    async def find(self, contract_id: str) -> ServedRequest | None:
        """The record of ``contract_id``: one not written yet, else the store's."""
        found = self._pending.get(contract_id)
        return found if found is not None else await self.store.get_served(contract_id)

    async def flush(self) -> None:
        """Write the records kept so far (kept again when the store is unavailable)."""
        if not self._pending:
            return
        batch, self._pending = self._pending, {}
        try:
            await self.store.put_served(list(batch.values()), self.keep_s)
        except StoreUnavailable:
            self._pending = {**batch, **self._pending}
            raise

    def start(self) -> None:
        """Flush every ``flush_s`` seconds in the background."""
        self._loop.start()

    async def close(self) -> None:
        """Stop the loop (a write under way ends first) and write what is left."""
        await self._loop.close()


def _score(body: Mapping[str, Any]) -> float:
    """The score given: ``score`` (0-10) or ``thumbs`` (up, down), exactly one."""
    score, thumbs = body.get("score"), body.get("thumbs")
    if (score is None) == (thumbs is None):
        raise InvalidInput("score", score, "give exactly one of score (0-10) and thumbs (up, down)")
    if thumbs is not None:
        if not isinstance(thumbs, str) or thumbs not in THUMBS:
            raise InvalidInput("thumbs", thumbs, "must be 'up' or 'down'")
        return THUMBS[thumbs]
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise InvalidInput("score", score, "must be a number from 0 to 10")
    if not math.isfinite(score) or not 0.0 <= score <= 10.0:
        raise InvalidInput("score", score, "must be a number from 0 to 10")
    return float(score)


class Feedback:
    """Callers' feedback, as judgments."""

    def __init__(self, book: ServedBook, oracle: Oracle, judge: JudgeSettings | None) -> None:
        self.book = book
        self.oracle = oracle
        self.judge = judge

    def pass_score(self, task_type: str) -> float:
        """The score a judgment needs to be a success at ``task_type``."""
        return DEFAULT_PASS_SCORE if self.judge is None else self.judge.pass_score_for(task_type)

    async def give(
        self, body: Mapping[str, Any], caller: str, admin: bool
    ) -> tuple[JudgmentResult, ServedRequest, str]:
        """The judgment of ``body``'s feedback by ``caller`` (the module says how), the
        request's record, and the comment."""
        for name in body:
            if name not in _FIELDS:
                raise InvalidInput(name, body[name], "is not a field of feedback")
        contract = body.get("contract_id")
        if not isinstance(contract, str) or not contract.strip() or len(contract) > 256:
            raise InvalidInput("contract_id", contract, "must be a gateway contract id")
        score = _score(body)
        comment = body.get("comment", "")
        if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
            raise InvalidInput(
                "comment", comment if not isinstance(comment, str) else comment[:40] + "...",
                f"must be text of at most {MAX_COMMENT} characters",
            )  # fmt: skip
        record = await self.book.find(contract)
        if record is None:
            raise NotFound("contract", contract)
        if record.caller != caller and not admin:
            raise Refused(f"contract {contract!r} is another client's: only its caller may rate it")
        task_type = record.task_type or "general"
        request = JudgmentRequest(
            agent_id=record.agent_id, contract_id=f"{contract}:feedback", task_type=task_type,
            score=score, success=score >= self.pass_score(task_type),
            judge=f"{FEEDBACK_PREFIX}{caller}", observed_at=datetime.fromtimestamp(record.at, UTC),
        )  # fmt: skip
        result = await self.oracle.submit_for_judgment(request)
        if comment and not result.duplicate:
            log.info(
                "feedback on %s (%s) by %s: %g: %s", contract, record.agent_id, caller, score,
                comment,
            )  # fmt: skip
        return result, record, comment
