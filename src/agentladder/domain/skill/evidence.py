"""The evidence the model learns from, one value per stored skill event.

- ``DeliberationEvidence``: every peer evaluation of every proposal of one deliberation
  (evaluator, author, round, score), and for a reported deliberation without raw
  evaluations, each proposal's aggregated score. An agent never evaluates itself here.
- ``ScoreEvidence``: an Oracle judgment of one agent's task (not one the orchestrator
  derived from a deliberation, whose scores the deliberation's evaluations already carry),
  with the ``judge`` that scored it: every source of scores is an evaluator, whose noise
  and leniency are learned. A judgment of past work (``history``: every imported one) is
  ``deferred``: no filter step moves a state for it; the next fit places it.
- ``VerdictEvidence``: a Sentinel's validation verdict.
- ``ModelChange``: a heartbeat changed the agent's ``model_name`` or ``provider_id``.

Each carries its idempotency ``key`` and the time ``at`` it happened (seconds since the
epoch: when it was observed, not when it arrived), so that the estimate is a function of
the stored events alone, whatever order they arrived in.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentladder.domain.agents import MODEL_FIELD_MAX, AgentName
from agentladder.domain.judgment import CONTRACT_ID_MAX, JUDGE_PATTERN, TASK_TYPE_PATTERN
from agentladder.errors import InvalidInput

__all__ = [
    "AGGREGATE",
    "DEFAULT_JUDGE",
    "JUDGE_PATTERN",
    "DeliberationEvidence",
    "Evaluation",
    "Evidence",
    "ModelChange",
    "ReportedScore",
    "ScoreEvidence",
    "VerdictEvidence",
]

_STRICT = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
DEFAULT_JUDGE = "oracle"
"""The judge of a judgment that names none."""
AGGREGATE = "aggregate"
"""The source of reported aggregated scores: one unknown aggregation, with its own noise."""
Score = Annotated[float, Field(ge=0.0, le=10.0)]
AGENT_ID_MAX = 64
KEY_MAX = len("judgment:") + AGENT_ID_MAX + len(":") + CONTRACT_ID_MAX
"""The longest key an accepted observation makes: ``judgment:<agent>:<contract>`` (330)
with an agent id and a contract id as long as their fields allow (a verdict's prefix is
shorter); at 300, such a judgment was stored by the Oracle and then refused as evidence."""


class Evaluation(BaseModel):
    """One evaluator's score of one author's proposal in one round."""

    model_config = _STRICT

    evaluator: AgentName
    author: AgentName
    round: int = Field(ge=1)
    score: Score


class ReportedScore(BaseModel):
    """A proposal's aggregated score, when the raw evaluations are not known."""

    model_config = _STRICT

    author: AgentName
    round: int = Field(ge=1)
    score: Score


class DeliberationEvidence(BaseModel):
    """The peer evaluations of one deliberation."""

    model_config = _STRICT

    kind: Literal["deliberation"] = "deliberation"
    key: str = Field(min_length=1, max_length=KEY_MAX)
    at: float
    task_type: str = Field(pattern=TASK_TYPE_PATTERN)
    agents: tuple[AgentName, ...] = Field(min_length=1)
    evaluations: tuple[Evaluation, ...] = ()
    aggregated: tuple[ReportedScore, ...] = ()

    @model_validator(mode="after")
    def _within(self) -> DeliberationEvidence:
        agents = set(self.agents)
        for index, ev in enumerate(self.evaluations):
            where = f"evaluations[{index}]"
            if ev.author not in agents:
                raise InvalidInput(f"{where}.author", ev.author, "is not in the deliberation")
            if ev.evaluator not in agents:
                raise InvalidInput(f"{where}.evaluator", ev.evaluator, "is not in the deliberation")
            if ev.evaluator == ev.author:
                raise InvalidInput(f"{where}.evaluator", ev.evaluator, "evaluates itself")
        for index, rs in enumerate(self.aggregated):
            if rs.author not in agents:
                raise InvalidInput(
                    f"aggregated[{index}].author", rs.author, "is not in the deliberation"
                )
        return self

    def touched(self) -> tuple[str, ...]:
        """The agents whose state this evidence changes (authors and evaluators)."""
        seen = {ev.author for ev in self.evaluations}
        seen.update(ev.evaluator for ev in self.evaluations)
        seen.update(rs.author for rs in self.aggregated)
        return tuple(sorted(seen))


class ScoreEvidence(BaseModel):
    """An Oracle judgment: a score of one task (or only whether it succeeded)."""

    model_config = _STRICT

    kind: Literal["judgment"] = "judgment"
    key: str = Field(min_length=1, max_length=KEY_MAX)
    at: float
    agent_id: AgentName
    task_type: str = Field(pattern=TASK_TYPE_PATTERN)
    score: Score | None = None
    success: bool = True
    judge: str = Field(default=DEFAULT_JUDGE, pattern=JUDGE_PATTERN)
    deferred: bool = False
    """Left to the next fit: no state is read or changed when it is applied. A judgment of
    past work's (``history``: an import's, fitted as a whole at its end), whoever applies
    it: a filter step moves an estimate forward from now, and history is not now. Not
    part of what was observed: the fingerprint leaves it out, and the stored text holds
    it only when set."""

    def touched(self) -> tuple[str, ...]:
        """The judged agent; none when ``deferred``."""
        return () if self.deferred else (self.agent_id,)


class VerdictEvidence(BaseModel):
    """A Sentinel's verdict on one output of one agent."""

    model_config = _STRICT

    kind: Literal["verdict"] = "verdict"
    key: str = Field(min_length=1, max_length=KEY_MAX)
    at: float
    agent_id: AgentName
    task_type: str = Field(pattern=TASK_TYPE_PATTERN)
    passed: bool

    def touched(self) -> tuple[str, ...]:
        """The validated agent."""
        return (self.agent_id,)


class ModelChange(BaseModel):
    """The agent now runs another model or provider: a new agent in all but name."""

    model_config = _STRICT

    kind: Literal["model_change"] = "model_change"
    key: str = Field(min_length=1, max_length=KEY_MAX)
    at: float
    agent_id: AgentName
    model_name: str = Field(default="", max_length=MODEL_FIELD_MAX)
    provider_id: str = Field(default="", max_length=MODEL_FIELD_MAX)

    def touched(self) -> tuple[str, ...]:
        """The agent whose model changed."""
        return (self.agent_id,)


Evidence = Annotated[
    DeliberationEvidence | ScoreEvidence | VerdictEvidence | ModelChange,
    Field(discriminator="kind"),
]
"""One stored skill event's evidence."""
