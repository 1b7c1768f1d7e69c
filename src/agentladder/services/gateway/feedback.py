"""A caller's feedback on an answer: ``POST /v1/feedback`` (docs/gateway.md, "Feedback").

Each answered request is recorded (``ServedBook``): its contract id, the agent that
answered, the caller (its token's name) and the task type, written to the store off the
request path, once a second for all the requests of that second, and kept
``gateway.feedback_days``; so feedback finds the agent after a restart and on another
instance. A process killed between two writes loses at most that second's records
(feedback on them is 404, as for an unknown contract).

``Feedback.give`` turns ``{"contract_id", "score" | "thumbs", "comment"}`` into skill
evidence about the agent that answered, and nothing else (docs/gateway.md, "Feedback"):
a score by the source ``feedback:<caller>`` at the request's task type (``general`` when
it had none), keyed ``judgment:<agent>:<contract_id>:feedback``, observed when the answer
was given. It is a **source, not a lever**: it pays no XP, sets no level, starts no
probation and changes no Sentinel rate (no Oracle event is written), and it is
``deferred``: no filter step moves an estimate for it; the next fit places it, where the
skill model learns the client's noise, leniency and honesty against the other sources
(the gateway's checks among them), and counts at most ``skill.feedback_scores`` of one
client's scores of one agent at one task type (``domain/skill/table.py``). ``thumbs`` up
is 10, down 0 (a two-valued source, as the skill model reads one). Only the caller that
made the request may rate it (an admin too); the same feedback again is a duplicate,
another score for the same contract a conflict (409).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentladder.errors import InvalidInput, NotFound, Refused, StoreUnavailable
from agentladder.services.gateway.flushing import FlushLoop
from agentladder.services.gateway.judge import UNTYPED_TASK_TYPE, JudgeSettings
from agentladder.services.skill.evidence import judgment_evidence
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.served import ServedRequest

__all__ = ["FEEDBACK_LOG", "FEEDBACK_PREFIX", "THUMBS", "Feedback", "Given", "ServedBook"]

log = logging.getLogger(__name__)
FEEDBACK_LOG = "agentladder.feedback"
"""The logger of callers' feedback and its comments (at INFO: ``serve`` shows it)."""

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


@dataclass(frozen=True, slots=True)
class Given:
    """Feedback taken: the request it rates, the score, the comment, and whether it was
    given before (a duplicate)."""

    record: ServedRequest
    task_type: str
    judge: str
    score: float
    comment: str
    duplicate: bool


class Feedback:
    """Callers' feedback, as skill evidence."""

    def __init__(self, book: ServedBook, skill: SkillService, judge: JudgeSettings | None) -> None:
        self.book = book
        self.skill = skill
        self.judge = judge

    def pass_score(self, task_type: str) -> float:
        """The score a judgment needs to be a success at ``task_type``."""
        return DEFAULT_PASS_SCORE if self.judge is None else self.judge.pass_score_for(task_type)

    async def give(self, body: Mapping[str, Any], caller: str, admin: bool) -> Given:
        """The evidence of ``body``'s feedback by ``caller``, applied once (the module
        says how); ``PayloadConflict`` for another score of the same contract."""
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
        task_type = record.task_type or UNTYPED_TASK_TYPE
        judge = f"{FEEDBACK_PREFIX}{caller}"
        evidence = judgment_evidence(
            record.agent_id, f"{contract}:feedback", task_type, score,
            score >= self.pass_score(task_type), record.at, judge=judge, deferred=True,
        )  # fmt: skip
        applied = await self.skill.observe(evidence)
        duplicate = not applied.created
        if not duplicate:
            logging.getLogger(FEEDBACK_LOG).info(
                "feedback on %s (%s) by %s: %g%s", contract, record.agent_id, caller, score,
                f": {comment}" if comment else "",
            )  # fmt: skip
        return Given(record, task_type, judge, score, comment, duplicate)
