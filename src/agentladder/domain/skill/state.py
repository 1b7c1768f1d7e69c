"""What the evidence model keeps: each agent's estimates and record as evaluator, and the
fleet's (task types' levels, judges' records, the learned spreads, the last fit).

The authoritative estimates come from the fit over every stored observation
(``fit.py``); between two fits, each new observation moves the estimates it concerns by
one filter step (``live.py``). An ``Estimate`` is therefore what is shown: a Gaussian
over the agent's skill on the 0-10 score scale, with ``base_mean`` and ``base_var``, the
values the last fit gave, from which the filter steps since have moved it.

The values are plain floats in slotted dataclasses; ``AGENT_SKILL`` and ``FLEET_SKILL``
turn them into JSON and back, to the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from pydantic import TypeAdapter

from agentladder.domain.skill.rules import SkillRules

__all__ = [
    "AGENT_SKILL",
    "FLEET",
    "FLEET_SKILL",
    "OVERALL",
    "AgentSkill",
    "Estimate",
    "FitInfo",
    "FleetSkill",
    "Point",
    "SourceState",
    "SourceType",
    "Spreads",
    "new_skill",
    "new_source",
    "replace",
]

OVERALL = "*"
"""The task type of the overall estimate in an agent's history points."""

FLEET = "=fleet"
"""The key of the fleet's state beside the agents' (not a valid agent id)."""


Point = tuple[float, str, float, float]
"""(time, task type or ``OVERALL``, mean, sd) of an estimate at a moment of its history."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """A Gaussian over one skill (variance > 0): what is shown, as of ``at``, the time of
    the latest observation in it (inactivity widens it from there). ``base_mean`` and
    ``base_var`` are the last fit's values; ``drop`` and ``rise`` the change detector's two
    CUSUM statistics (``chain.py``)."""

    mean: float
    var: float
    n: int = 0
    at: float | None = None
    drop: float = 0.0
    rise: float = 0.0
    base_mean: float | None = None
    base_var: float | None = None


@dataclass(frozen=True, slots=True)
class SourceType:
    """A source's leniency and noise at one task type."""

    bias_mean: float
    bias_var: float
    noise_var: float
    n: int = 0


@dataclass(frozen=True, slots=True)
class SourceState:
    """A source of scores (an agent as evaluator, a judge, the aggregated reports): its
    leniency (a Gaussian over its bias), its noise variance and the probability that its
    scores follow the quality at all (``honesty``), overall and per task type; the share of
    its scores at 0 or 10 (``at_bounds``)."""

    bias_mean: float
    bias_var: float
    noise_var: float
    honesty: float
    n: int = 0
    types: dict[str, SourceType] = field(default_factory=dict)
    at_bounds: float = 0.0

    def at_type(self, task_type: str) -> tuple[float, float, float]:
        """Leniency mean and variance and noise variance at a task type (its own where it
        has scored there, else its overall)."""
        found = self.types.get(task_type)
        if found is None:
            return self.bias_mean, self.bias_var, self.noise_var
        return found.bias_mean, found.bias_var, found.noise_var


def new_source(rules: SkillRules, spreads: Spreads | None = None) -> SourceState:
    """A source nothing is known of: the priors."""
    leniency = (spreads.leniency if spreads else rules.leniency_sd) ** 2
    return SourceState(
        bias_mean=0.0,
        bias_var=leniency + rules.type_leniency_sd**2,
        noise_var=rules.noise_sd**2,
        honesty=rules.honesty_prior,
    )


@dataclass(frozen=True, slots=True)
class AgentSkill:
    """Everything the evidence model knows of one agent: its skill per task type, overall,
    and in general (``general``: its ability relative to the task types' levels, which is
    what a task type it has not done yet is predicted from), its record as evaluator in its
    current model (``evaluator``), and its history."""

    agent_id: str
    overall: Estimate
    evaluator: SourceState
    types: dict[str, Estimate] = field(default_factory=dict)
    general: Estimate | None = None
    model_changes: int = 0
    history: tuple[Point, ...] = ()
    fit: int = 0


def new_skill(agent_id: str, rules: SkillRules) -> AgentSkill:
    """An agent nothing is known of."""
    prior = rules.level_sd**2 + rules.ability_sd**2 + rules.type_spread**2
    return AgentSkill(
        agent_id=agent_id,
        overall=Estimate(mean=rules.prior_mean, var=prior),
        evaluator=new_source(rules),
    )


@dataclass(frozen=True, slots=True)
class Spreads:
    """The spreads the last fit learned (sd, score points)."""

    type_spread: float
    leniency: float
    difficulty: float


@dataclass(frozen=True, slots=True)
class FitInfo:
    """The fit the states come from: the last event of the log it read (``seq``), how many
    events and observations it used, when it ran, with which rules, and whether its
    uncertainty is exact (a dense solve) or approximate (a large fleet)."""

    seq: int
    events: int
    observations: int
    at: float
    rules: str
    exact: bool = True
    iterations: int = 0


@dataclass(frozen=True, slots=True)
class FleetSkill:
    """What the fleet shares, as of the last fit: each task type's level (its agents' mean
    skill), the judges' and other non-agent sources' records, the learned spreads, the
    fit's own record, and each task type's scale: the sources whose evidence-weighted
    average score it is, with their shares (the three largest). Empty before the first
    fit."""

    levels: dict[str, Estimate] = field(default_factory=dict)
    sources: dict[str, SourceState] = field(default_factory=dict)
    spreads: Spreads | None = None
    fit: FitInfo | None = None
    scales: dict[str, tuple[tuple[str, float], ...]] = field(default_factory=dict)
    anchors: dict[str, float] = field(default_factory=dict)
    """Per task type: the variance of its scale's anchor (``anchor.py``), an error every
    agent's skill there shares: added to an estimate when it is shown, not to the state
    the filter steps move (a shift of the whole scale makes no score less telling)."""

    def anchor_var(self, task_type: str | None) -> float:
        """The anchor's variance at a task type; overall (None), that of the mean over the
        task types, their anchors' errors taken as one (the same sources hold them)."""
        if task_type is not None:
            return self.anchors.get(task_type, 0.0)
        if not self.anchors:
            return 0.0
        sds = [math.sqrt(v) for v in self.anchors.values()]
        return (sum(sds) / len(self.levels or self.anchors)) ** 2

    def level(self, task_type: str, rules: SkillRules) -> tuple[float, float]:
        """A task type's level (mean, variance): the prior before the fit has seen it."""
        found = self.levels.get(task_type)
        if found is None:
            return rules.prior_mean, rules.level_sd**2
        return found.mean, found.var

    def type_spread(self, rules: SkillRules) -> float:
        """The learned spread of an agent's skill at one task type (variance)."""
        return (self.spreads.type_spread if self.spreads else rules.type_spread) ** 2

    def difficulty(self, rules: SkillRules) -> float:
        """The learned spread of a deliberation's offset (variance)."""
        return (self.spreads.difficulty if self.spreads else rules.difficulty_sd) ** 2

    def source(self, name: str, rules: SkillRules) -> SourceState:
        """A non-agent source's record (the priors for one the fit has not seen)."""
        return self.sources.get(name) or new_source(rules, self.spreads)


AGENT_SKILL: TypeAdapter[AgentSkill] = TypeAdapter(AgentSkill)
"""JSON of an agent's state, for the stores (floats round-trip to the same bits)."""
FLEET_SKILL: TypeAdapter[FleetSkill] = TypeAdapter(FleetSkill)
"""JSON of the fleet's state."""
