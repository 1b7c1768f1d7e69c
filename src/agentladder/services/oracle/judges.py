"""Judges score an agent's output when a judgment arrives without a score.

A judge never scores its own agent's output (``Refused``). Built in:

- ``GivenScoreJudge``: rubric-free; the score was given elsewhere (a person, a test
  harness, another system) and travels in the output, as a bare number (``"8.5"``) or a
  JSON object with a ``score`` field (``{"score": 8.5, ...}``).

- ``ProviderJudge``: an LLM judge, through any provider (an OpenAI-compatible endpoint or
  a simulated agent), asked for a JSON score as in a peer evaluation.
"""

from __future__ import annotations

import json
import math
from typing import Protocol

from agentladder.domain.judgment import Judgment
from agentladder.errors import InvalidInput, Refused
from agentladder.providers.base import EvaluateRequest, Provider

__all__ = ["GivenScoreJudge", "Judge", "ProviderJudge", "check_not_own"]


class Judge(Protocol):
    """Scores one output from 0 to 10."""

    @property
    def name(self) -> str:
        """Shown in the award, so a reader knows who scored."""
        ...

    @property
    def agent_id(self) -> str | None:
        """The agent behind the judge, if it is one (it may not judge itself)."""
        ...

    async def score(self, judgment: Judgment, output: str | None) -> float:
        """The score of ``output``; ``InvalidInput`` when it cannot be scored."""
        ...


def check_not_own(judge: Judge, judgment: Judgment) -> None:
    """Refuse a judge scoring its own agent's output."""
    if judge.agent_id is not None and judge.agent_id == judgment.agent_id:
        raise Refused(f"judge {judge.name!r} cannot judge its own agent {judgment.agent_id!r}")


class GivenScoreJudge:
    """Reads a score that was given with the output."""

    name = "given_score"
    agent_id: str | None = None

    async def score(self, judgment: Judgment, output: str | None) -> float:
        """The number in ``output`` (bare or as ``{"score": ...}``), from 0 to 10."""
        if output is None or not output.strip():
            raise InvalidInput("output", output, "must carry the score to use (none given)")
        try:
            value = json.loads(output)
        except ValueError:
            raise InvalidInput("output", output[:80], 'must be a number or {"score": n}') from None
        if isinstance(value, dict):
            value = value.get("score")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInput("output", output[:80], 'must be a number or {"score": n}')
        if not math.isfinite(value) or not 0 <= value <= 10:
            raise InvalidInput("score", value, "must be a finite number from 0 to 10")
        return float(value)


class ProviderJudge:
    """An LLM judge: asks a model (through a provider) to score the output, as a peer would."""

    def __init__(
        self, provider: Provider, *, agent_id: str | None = None, name: str = "llm"
    ) -> None:
        self._provider = provider
        self._agent_id = agent_id
        self._name = name

    @property
    def name(self) -> str:
        """``llm`` unless named otherwise (e.g. the judging agent's name)."""
        return self._name

    @property
    def agent_id(self) -> str | None:
        """The agent whose model judges; it may not judge its own output."""
        return self._agent_id

    async def score(self, judgment: Judgment, output: str | None) -> float:
        """The model's score of ``output`` for the judged task; ``InvalidInput`` without one."""
        if output is None or not output.strip():
            raise InvalidInput("output", output, "must be given for an LLM judge to score")
        evaluation = await self._provider.evaluate(
            EvaluateRequest(
                deliberation_id=judgment.contract_id, round=1,
                user_query=f"A {judgment.task_type} task.", task_type=judgment.task_type,
                proposal=output,
            )
        )  # fmt: skip
        return evaluation.score
