"""What the evidence model keeps per agent: its skill estimates and its record as evaluator.

An ``Estimate`` is a Gaussian over the agent's latent quality on the 0-10 score scale
(mean and variance), with the number of observations behind it and the time of the last
one (inactivity widens it from there). ``EvaluatorState`` is what the agent's own scores
of others' work have shown: its leniency (a Gaussian over its bias), its noise (an
inverse-gamma's shape and rate) and its honesty (log-odds that its scores are honest
rather than arbitrary). The values are plain floats in slotted dataclasses (built on the
hot path without validation); ``AGENT_SKILL`` and ``FLEET_SKILL`` turn them into JSON and
back, to the same bits, which replay relies on.
"""

from __future__ import annotations

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
    "EvaluatorState",
    "FleetSkill",
    "Point",
    "new_skill",
    "replace",
]

OVERALL = "*"
"""The task type of the overall estimate in an agent's history points."""

FLEET = "=fleet"
"""The key of the fleet's state beside the agents' (not a valid agent id)."""


Point = tuple[float, str, float, float]
"""(time, task type or ``OVERALL``, mean, sd) after an update."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """A Gaussian over one latent quality (variance > 0). ``drop`` and ``rise`` are the
    change detector's two CUSUM statistics: how far the evidence has run below and above
    the estimate, in standard units beyond the allowance (``update.watched``)."""

    mean: float
    var: float
    n: int = 0
    at: float | None = None
    drop: float = 0.0
    rise: float = 0.0


@dataclass(frozen=True, slots=True)
class EvaluatorState:
    """An agent as evaluator of other agents' work."""

    bias_mean: float
    bias_var: float
    noise_shape: float
    noise_rate: float
    trust: float
    n: int = 0

    def noise_var(self, rules: SkillRules) -> float:
        """The evaluator's noise variance, within the rules' bounds."""
        low = rules.min_noise_sd * rules.min_noise_sd
        high = rules.max_noise_sd * rules.max_noise_sd
        return min(high, max(low, self.noise_rate / self.noise_shape))


@dataclass(frozen=True, slots=True)
class AgentSkill:
    """Everything the evidence model knows of one agent."""

    agent_id: str
    overall: Estimate
    evaluator: EvaluatorState
    types: dict[str, Estimate] = field(default_factory=dict)
    model_changes: int = 0
    history: tuple[Point, ...] = ()


def new_evaluator(rules: SkillRules) -> EvaluatorState:
    """An evaluator nothing is known of: the rules' priors."""
    shape = rules.noise_weight / 2.0
    return EvaluatorState(
        bias_mean=0.0,
        bias_var=rules.leniency_sd * rules.leniency_sd,
        noise_shape=shape,
        noise_rate=shape * rules.noise_sd * rules.noise_sd,
        trust=rules.trust_prior,
    )


def new_skill(agent_id: str, rules: SkillRules) -> AgentSkill:
    """An agent nothing is known of."""
    return AgentSkill(
        agent_id=agent_id,
        overall=Estimate(mean=rules.prior_mean, var=rules.prior_var),
        evaluator=new_evaluator(rules),
    )


@dataclass(frozen=True, slots=True)
class FleetSkill:
    """What the whole fleet shares. Per task type with deliberations, the level of the
    peers' score scale: agents' estimates at that type are kept relative to it, and it
    moves for everyone at once when a deliberation shows the common level was off
    (assumed-density filtering alone would lose that: estimates become precise relative
    to each other long before their common level is). And how much round offsets (a
    task's difficulty) vary, learned from the deliberations (an inverse-gamma's shape
    and rate)."""

    levels: dict[str, Estimate] = field(default_factory=dict)
    offset_shape: float | None = None
    offset_rate: float | None = None
    leniency_weight: float = 0.0
    leniency_sum: float = 0.0
    leniency_squares: float = 0.0
    evaluators: int = 0

    def level(self, task_type: str) -> tuple[float, float]:
        """The level of a task type (mean, variance); (0, 0) before its first deliberation:
        judgments and verdicts are on the absolute scale. The variance includes the
        anchor's: the scale is the honest evaluators' average, and the average of the
        ``evaluators`` leniencies seen is known only to their spread over root n."""
        found = self.levels.get(task_type)
        if found is None:
            return 0.0, 0.0
        return found.mean, found.var + self.anchor_var()

    def leniency_var(self, rules: SkillRules) -> float:
        """How much honest evaluators' leniencies vary: learned, from ``leniency_sd``."""
        if self.leniency_weight < 1.0:
            return rules.leniency_sd**2
        mean = self.leniency_sum / self.leniency_weight
        return max(0.01, self.leniency_squares / self.leniency_weight - mean * mean)

    def anchor_var(self) -> float:
        """The variance of the honest evaluators' mean leniency."""
        if self.evaluators == 0 or self.leniency_weight < 1.0:
            return 0.0
        mean = self.leniency_sum / self.leniency_weight
        spread = max(0.0, self.leniency_squares / self.leniency_weight - mean * mean)
        return spread / self.evaluators

    def offset_var(self, rules: SkillRules) -> float:
        """The variance of a round's offset: learned, starting from ``difficulty_sd``."""
        if self.offset_shape is None or self.offset_rate is None:
            return rules.difficulty_sd**2
        low, high = 0.05**2, rules.difficulty_sd**2 * 4.0
        return min(high, max(low, self.offset_rate / self.offset_shape))


AGENT_SKILL: TypeAdapter[AgentSkill] = TypeAdapter(AgentSkill)
"""JSON of an agent's state, for the stores (floats round-trip to the same bits)."""
FLEET_SKILL: TypeAdapter[FleetSkill] = TypeAdapter(FleetSkill)
"""JSON of the fleet's state."""
