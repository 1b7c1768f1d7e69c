"""Who failed in a deliberation: each participant is answerable for its own calls only.

Faults belong to whoever failed (DESIGN.md, "Evidence semantics"):

- a proposal the agent did not deliver (its call failed, timed out, or was not made
  because its provider asked to wait) is its failure;
- an evaluation it did not deliver is its failure: the evaluator's, never the author's;
- a proposal it delivered that no peer scored (every evaluator of it failed) is
  ``unscored``: not its failure, and not a success either.

An agent's verdict: ``failed`` when any of its own calls failed, else ``scored`` when a
proposal of it was scored, else ``unscored``. Its Oracle judgment (``judgment_of``): a
failed agent is judged ``success: false`` (its streak is cut, probation starts), a scored
one succeeds (at or above ``orchestrator.success_min_score`` when set), an unscored one
is not judged at all: no failure, no probation, no broken streak, no XP.

A deliberation reported from elsewhere carries no errors: a proposal reported without a
score is taken as not delivered (the report says the agent had no scored proposal).

``explain_promotion`` says why the floor group promoted whom, or nobody. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.promotion import PromotionResult

__all__ = [
    "AgentOutcome",
    "JudgmentCall",
    "Verdict",
    "explain_promotion",
    "judgment_of",
    "outcomes",
]

_EXCERPT = 160


class Verdict(StrEnum):
    """What an agent's own calls came to in one deliberation."""

    SCORED = "scored"
    UNSCORED = "unscored"
    FAILED = "failed"


class JudgmentCall(StrEnum):
    """How the Oracle judges an agent's part: a success, a failure, or not at all."""

    SUCCESS = "success"
    FAILED = "failed"
    NONE = "none"


class AgentOutcome(BaseModel):
    """One agent's part in a deliberation: its calls, what came of them, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Verdict
    judgment: JudgmentCall = Field(description="how the Oracle judges it (none: not judged)")
    proposals: int = Field(description="proposals it was asked for")
    proposals_failed: int = Field(description="of them, not delivered (its failure)")
    proposals_unscored: int = Field(description="delivered, but no peer scored them")
    evaluations: int = Field(description="evaluations it was asked for")
    evaluations_failed: int = Field(description="of them, not delivered (its failure)")
    detail: str


class _Evaluation(Protocol):
    @property
    def evaluator(self) -> str: ...
    @property
    def score(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...


class _Proposal(Protocol):
    @property
    def agent_id(self) -> str: ...
    @property
    def content(self) -> str | None: ...
    @property
    def aggregated_score(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def evaluations(self) -> Sequence[_Evaluation]: ...


class _Round(Protocol):
    @property
    def number(self) -> int: ...
    @property
    def proposals(self) -> Sequence[_Proposal]: ...


def _cut(text: str | None) -> str:
    flat = " ".join((text or "no answer").split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 3] + "..."


def judgment_of(verdict: Verdict, score: float | None, min_score: float | None) -> JudgmentCall:
    """The Oracle's judgment of an agent's part: failed when it failed; not judged when
    unscored; else a success when scored at least ``min_score`` (when one is set)."""
    if verdict is Verdict.FAILED:
        return JudgmentCall.FAILED
    if verdict is Verdict.UNSCORED or score is None:
        return JudgmentCall.NONE
    if min_score is not None and score < min_score:
        return JudgmentCall.FAILED
    return JudgmentCall.SUCCESS


def outcomes(
    agents: Sequence[str],
    rounds: Sequence[_Round],
    scores: Mapping[str, float | None],
    min_score: float | None = None,
) -> dict[str, AgentOutcome]:
    """Each agent's outcome from the rounds (``scores``: the deliberation scores)."""
    out = {}
    for agent in agents:
        mine = [p for r in rounds for p in r.proposals if p.agent_id == agent]
        failed = [p for p in mine if p.content is None and p.aggregated_score is None]
        unscored = [p for p in mine if p.content is not None and p.aggregated_score is None]
        given = [e for r in rounds for p in r.proposals for e in p.evaluations
                 if e.evaluator == agent]  # fmt: skip
        missed = [e for e in given if e.error is not None or e.score is None]
        score = scores.get(agent)
        parts = []
        if failed:
            first = _cut(failed[0].error)
            parts.append(f"{len(failed)} of its {len(mine)} proposals failed ({first})")
        if missed:
            parts.append(
                f"{len(missed)} of its {len(given)} evaluations failed ({_cut(missed[0].error)})"
            )
        if parts:
            verdict, detail = Verdict.FAILED, "; ".join(parts)
        elif score is not None:
            verdict = Verdict.SCORED
            detail = f"scored {score:.2f}; {len(given)} evaluations delivered"
            if unscored:
                detail += f"; {len(unscored)} of its {len(mine)} proposals not scored by anyone"
        else:
            verdict = Verdict.UNSCORED
            evaluators = sorted({e.evaluator for p in unscored for e in p.evaluations})
            named = ", ".join(evaluators) or "nobody"
            detail = (
                f"not judged: its {len(mine)} proposals were delivered but nobody scored them:"
                f" every evaluator failed ({named}); not its failure"
            )
        out[agent] = AgentOutcome(
            verdict=verdict, judgment=judgment_of(verdict, score, min_score),
            proposals=len(mine), proposals_failed=len(failed), proposals_unscored=len(unscored),
            evaluations=len(given), evaluations_failed=len(missed), detail=detail,
        )  # fmt: skip
    return out


def explain_promotion(
    result: PromotionResult, found: Mapping[str, AgentOutcome] | None = None
) -> str:
    """Why the floor group promoted whom, or nobody (``found``: the agents' outcomes)."""
    if result.floor_rank is None:
        return "nobody took part: nobody promoted"
    group = ", ".join(result.floor_group)
    floor = f"the floor group (rank {result.floor_rank}: {group})"
    if result.reason == "single_agent":
        return f"{floor} had one agent, who scored: promoted alone"
    if result.reason == "tie":
        return f"{floor} competed: {', '.join(result.promoted)} tied with the highest score"
    if result.reason == "highest_score":
        return f"{floor} competed: {result.promoted[0]} had the highest score"
    why = []
    for agent in result.floor_group:
        outcome = (found or {}).get(agent)
        if outcome is not None:
            why.append(f"{agent}: {outcome.verdict.value} ({outcome.detail})")
    reasons = f": {'; '.join(why)}" if why else ""
    return (
        f"nobody promoted: nobody in {floor} had a scored proposal{reasons}. A floor group"
        " in which nobody scored promotes nobody (docs/rules.md)"
    )
