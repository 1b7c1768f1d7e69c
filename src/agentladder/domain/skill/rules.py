"""The evidence model's parameters, overridable from the ``skill:`` section of the config.

Every value is on the 0-10 score scale (standard deviations in score points) or says
what it is. Spreads marked "learned" are where the fit starts: it learns them from the
evidence, and the value here is its prior guess, worth ``hyper_weight`` observations.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SkillRules"]


class SkillRules(BaseModel):
    """How evidence becomes an estimate; ``SkillRules()`` is the documented default."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    prior_mean: float = Field(
        default=5.0, ge=0.0, le=10.0, description="a new task type's level (its agents' mean skill)"
    )
    level_sd: float = Field(default=2.5, gt=0.0, description="prior sd of a task type's level")
    ability_sd: float = Field(
        default=1.5, gt=0.0,
        description="sd of agents' general ability around a task type's level",
    )  # fmt: skip
    type_spread: float = Field(
        default=0.7, gt=0.0,
        description="sd of an agent's skill at one task type around its general ability (learned)",
    )  # fmt: skip
    difficulty_sd: float = Field(
        default=1.0, gt=0.0, description="sd of a deliberation's shared offset (learned)"
    )
    leniency_sd: float = Field(
        default=1.0, gt=0.0, description="sd of evaluators' and judges' leniency (learned)"
    )
    type_leniency_sd: float = Field(
        default=0.3, gt=0.0,
        description="sd of a source's leniency at one task type around its own",
    )  # fmt: skip
    noise_sd: float = Field(
        default=1.5, gt=0.0, description="the noise (sd) of a source nothing is known of"
    )
    noise_weight: float = Field(
        default=4.0, gt=0.0, description="how many scores the noise prior is worth"
    )
    type_noise_weight: float = Field(
        default=10.0, gt=0.0,
        description="how many scores pool a source's noise at one task type to its own",
    )  # fmt: skip
    min_noise_sd: float = Field(default=0.1, gt=0.0, description="the least noise of a source")
    outlier_share: float = Field(
        default=0.02, gt=0.0, lt=1.0,
        description="chance that one score of an honest source is arbitrary",
    )  # fmt: skip
    honesty_prior: float = Field(
        default=0.9, gt=0.0, lt=1.0,
        description="prior probability that a source's scores follow the quality",
    )  # fmt: skip
    hyper_weight: float = Field(
        default=4.0, gt=0.0, description="how many observations a learned spread's prior is worth"
    )
    reference_judges: tuple[str, ...] = Field(
        default=(),
        description="judges that hold the scale wherever they have scored (docs/skill.md,"
        " 'The scale'); none: every source, by its evidence up to a cap",
    )  # fmt: skip
    anchor_scores: float = Field(
        default=50.0, gt=0.0,
        description="a source's scores count in the scale up to the larger of this and"
        " anchor_cap times the typical other source's (docs/skill.md, 'The scale')",
    )  # fmt: skip
    anchor_cap: float = Field(
        default=3.0, gt=0.0,
        description="the most scores a source counts in the scale, in those of the typical"
        " other source at the task type (at least anchor_scores)",
    )  # fmt: skip
    anchor_reach: float = Field(
        default=4.685, gt=0.0,
        description="robust sds of the sources' leniencies from their median beyond which a"
        " source weighs nothing in the scale (Tukey's biweight; docs/skill.md, 'The scale')",
    )  # fmt: skip
    sd_floor: float = Field(
        default=0.05, ge=0.0,
        description="no estimate's sd is below this: one judge's many scores of one agent"
        " share what that judge thinks of it",
    )  # fmt: skip
    censored_judges: tuple[str, ...] = Field(
        default=(),
        description="judges whose scores at 0 or 10 read 'this or beyond' (an open-ended"
        " rubric's bound); every other score at a bound is that score (docs/skill.md)",
    )  # fmt: skip
    feedback_scores: int = Field(
        default=5, ge=1, le=10_000,
        description="the most scores one client's feedback on one agent at one task type"
        " counts as (docs/skill.md, 'Feedback')",
    )  # fmt: skip
    pass_threshold: float = Field(
        default=5.0, ge=0.0, le=10.0,
        description="the skill at which a validation passes half the time",
    )  # fmt: skip
    pass_sd: float = Field(
        default=1.5, gt=0.0, description="how sharply passing depends on skill (probit sd)"
    )
    drift_sd_per_day: float = Field(
        default=0.1, ge=0.0, description="how far skill may drift per day (random walk sd)"
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
    fit_iterations: int = Field(
        default=60, ge=1, le=1000, description="most rounds of the fit's re-weighting"
    )
    fit_tolerance: float = Field(
        default=5e-4, gt=0.0,
        description="the fit stops when no estimate moves more than this in a round",
    )  # fmt: skip
    exact_limit: int = Field(
        default=1000, ge=0,
        description="unknowns up to which the fit's uncertainty is exact; approximate above",
    )  # fmt: skip

    fit_interval_s: float = Field(
        default=30.0, gt=0.0, description="seconds between two fits of new evidence by serve"
    )

    def censors(self, source: str) -> bool:
        """Whether a source's scores at 0 or 10 are censored: only a judge named in
        ``censored_judges`` (its source ``judge:<name>``)."""
        return source.startswith("judge:") and source[len("judge:") :] in self.censored_judges

    def digest(self) -> str:
        """The rules that shape an estimate, as one canonical JSON text: a fit made with
        other rules differs (how often ``serve`` fits does not count)."""
        return self.model_dump_json(exclude={"fit_interval_s"})
