"""The evidence model's parameters, overridable from the ``skill:`` section of the config.

Every value is on the 0-10 score scale (standard deviations in score points) or says
what it is. The defaults are the ones ``benchmarks/bench_fidelity.py`` was run with.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SkillRules"]


class SkillRules(BaseModel):
    """How evidence moves an estimate; ``SkillRules()`` is the documented default."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    prior_mean: float = Field(default=5.0, ge=0.0, le=10.0, description="a new agent's skill")
    prior_sd: float = Field(default=2.5, gt=0.0, description="a new agent's uncertainty")
    type_spread: float = Field(
        default=1.0, ge=0.0,
        description="sd of an agent's skill at one task type around its overall skill",
    )  # fmt: skip
    difficulty_sd: float = Field(
        default=2.0, gt=0.0, description="prior sd of a deliberation round's shared offset"
    )
    leniency_sd: float = Field(
        default=1.0, gt=0.0, description="prior sd of an evaluator's leniency (bias)"
    )
    noise_sd: float = Field(
        default=1.0, gt=0.0, description="prior guess of an evaluator's noise (sd)"
    )
    noise_weight: float = Field(
        default=4.0, gt=0.0, description="how many scores the noise prior is worth"
    )
    min_noise_sd: float = Field(default=0.1, gt=0.0)
    max_noise_sd: float = Field(
        default=3.0, gt=0.0,
        description="the noisiest honest evaluator; noisier scores count as arbitrary",
    )  # fmt: skip
    honesty_prior: float = Field(
        default=0.9, gt=0.0, lt=1.0, description="prior probability an evaluator is honest"
    )
    trust_clip: float = Field(
        default=12.0, gt=0.0, description="bound on an evaluator's honesty log-odds"
    )
    robust_df: float = Field(
        default=4.0, gt=0.0, description="degrees of freedom of the scores' Student-t noise"
    )
    passes: int = Field(default=1, ge=1, le=10, description="reweighting passes per update")
    aggregate_noise_sd: float = Field(
        default=1.0, gt=0.0,
        description="noise of a reported aggregated score (no raw evaluations)",
    )  # fmt: skip
    judgment_noise_sd: float = Field(
        default=1.5, gt=0.0, description="noise of an Oracle judgment's score"
    )
    pass_threshold: float = Field(
        default=5.0, ge=0.0, le=10.0,
        description="the skill at which a validation passes half the time",
    )  # fmt: skip
    pass_sd: float = Field(
        default=1.5, gt=0.0, description="how sharply passing depends on skill (probit sd)"
    )
    drift_sd_per_day: float = Field(
        default=0.1, ge=0.0, description="uncertainty added per day without evidence"
    )
    dynamics_sd: float = Field(
        default=0.02, ge=0.0, description="uncertainty added at each update (skill may move)"
    )
    model_change_sd: float = Field(
        default=1.5, ge=0.0, description="uncertainty added when the agent's model changes"
    )
    change_allowance: float = Field(
        default=1.0, ge=0.0,
        description="the change detector's slack per update, in sd of the evidence",
    )  # fmt: skip
    change_threshold: float = Field(
        default=8.0, ge=0.0,
        description="CUSUM level (sd) at which skill has changed; 0 turns detection off",
    )  # fmt: skip
    change_sd: float = Field(
        default=1.0, ge=0.0, description="uncertainty added when a change is detected"
    )
    provisional_sd: float = Field(
        default=1.0, gt=0.0, description="an estimate with a larger sd is provisional"
    )
    interval_z: float = Field(
        default=1.959963984540054, gt=0.0, description="the 95% interval's half-width in sd"
    )
    history: int = Field(default=64, ge=0, le=1024, description="points of history kept")

    @property
    def prior_var(self) -> float:
        """The variance of a new agent's skill."""
        return self.prior_sd * self.prior_sd

    @property
    def trust_prior(self) -> float:
        """The honesty prior as log-odds."""
        return math.log(self.honesty_prior / (1.0 - self.honesty_prior))
