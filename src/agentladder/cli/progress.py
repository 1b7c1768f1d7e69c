"""``agentladder deliberate``'s progress on stderr while it runs, so that stdout holds only
its output (the table, or ``--json``).

Each provider of the deliberation is wrapped (``Reporting``) to count its calls as they
end, per round: on a terminal a live line is updated at every call (``round 1 of 2: 3
proposals, 5 evaluations``), and at the end of each round one line is printed, on a
terminal or not (a pipe, CI): ``round 1 of 2: 4 proposals (4 answered), 12 evaluations
(12 answered), 0.3 s``. A round ends when the next one's first call starts, or when the
deliberation does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agentladder.providers.base import (
    EvaluateRequest,
    Evaluation,
    Proposal,
    ProposeRequest,
    Provider,
)

__all__ = ["Calls", "Reporting"]


@dataclass
class _Round:
    number: int
    started: float = field(default_factory=time.perf_counter)
    proposals: int = 0
    proposed: int = 0
    evaluations: int = 0
    evaluated: int = 0


class Calls:
    """The calls of one deliberation, by round; ``say`` prints a line, ``show`` (on a
    terminal) replaces the live one."""

    def __init__(
        self, rounds: int, say: Callable[[str], None], show: Callable[[str], None] | None = None
    ) -> None:
        self.rounds = rounds
        self.say = say
        self.show = show
        self.current: _Round | None = None

    def begin(self, number: int) -> None:
        """A call of round ``number`` starts (the previous round, if any, has ended)."""
        if self.current is not None and number > self.current.number:
            self.finish()
        if self.current is None:
            self.current = _Round(number)
            if self.show is not None:
                self.show(f"round {number} of {self.rounds}: asking the agents")

    def done(self, *, evaluation: bool, ok: bool) -> None:
        """A call of the current round ended, answered (``ok``) or not."""
        now = self.current
        if now is None:
            return
        if evaluation:
            now.evaluations += 1
            now.evaluated += ok
        else:
            now.proposals += 1
            now.proposed += ok
        if self.show is not None:
            self.show(f"round {now.number} of {self.rounds}: {now.proposals} proposals,"
                      f" {now.evaluations} evaluations")  # fmt: skip

    def finish(self) -> None:
        """The current round ended: its line."""
        now, self.current = self.current, None
        if now is None:
            return
        took = time.perf_counter() - now.started
        self.say(f"round {now.number} of {self.rounds}: {now.proposals} proposals"
                 f" ({now.proposed} answered), {now.evaluations} evaluations"
                 f" ({now.evaluated} answered), {took:.1f} s")  # fmt: skip


class Reporting:
    """A provider that tells ``calls`` of each call it makes through ``inner``."""

    def __init__(self, inner: Provider, calls: Calls) -> None:
        self.inner = inner
        self.calls = calls

    async def propose(self, request: ProposeRequest) -> Proposal:
        """``inner``'s proposal, counted."""
        self.calls.begin(request.round)
        try:
            answer = await self.inner.propose(request)
        except BaseException:
            self.calls.done(evaluation=False, ok=False)
            raise
        self.calls.done(evaluation=False, ok=True)
        return answer

    async def evaluate(self, request: EvaluateRequest) -> Evaluation:
        """``inner``'s evaluation, counted."""
        self.calls.begin(request.round)
        try:
            answer = await self.inner.evaluate(request)
        except BaseException:
            self.calls.done(evaluation=True, ok=False)
            raise
        self.calls.done(evaluation=True, ok=True)
        return answer

    async def aclose(self) -> None:
        """Nothing: the services close ``inner`` themselves."""
