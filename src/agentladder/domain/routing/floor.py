"""cheapest_above's floor as applied (``Floor``): the posterior probability that an agent's
skill clears it, whether that proves the agent, and the chance that more judged answers
would (docs/routing.md, "The decision rule"). Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from agentladder.domain.routing.table import Candidate

__all__ = ["Z95", "Floor", "p_clear"]

Z95 = 1.959963984540054
"""The standard normal's 97.5% quantile: a 95% interval is ``skill +- Z95 sd``."""

_NORMAL = NormalDist()


def p_clear(skill: float, sd: float, floor: float) -> float:
    """The posterior probability that a skill of mean ``skill`` and sd ``sd`` is at least
    ``floor`` (normal); a skill known exactly (sd 0) clears it or not."""
    if sd <= 0.0:
        return 1.0 if skill >= floor else 0.0
    return 0.5 * math.erfc((floor - skill) / (sd * math.sqrt(2.0)))


@dataclass(frozen=True, slots=True)
class Floor:
    """cheapest_above's floor as applied: its value, and the confidence an agent's skill
    must clear it with (``z``: that confidence's standard normal quantile)."""

    value: float
    confidence: float
    share: float | None = None  # the share of the reference's skill it was computed as
    reference: str | None = None  # with a share: the reference, which it was made from

    @property
    def z(self) -> float:
        return _NORMAL.inv_cdf(self.confidence)

    def clears(self, c: Candidate) -> bool:
        """Proven: the posterior probability that its skill clears the floor is at least
        the confidence (``skill - z sd >= floor``: the same test, exactly); with a share,
        the reference always is: the floor is a share of it, "nearly the best" allows the
        best (so a routing never pays more than the reference costs)."""
        return c.skill - self.z * c.sd >= self.value or c.agent_id == self.reference

    def p(self, c: Candidate) -> float:
        return p_clear(c.skill, c.sd, self.value)

    def reachable(self, c: Candidate) -> bool:
        """Its 95% interval reaches the floor: it has not been shown to fall short."""
        return c.skill + Z95 * c.sd >= self.value

    def p_proven_after(self, c: Candidate, answers: int) -> float:
        """The probability that ``answers`` more judged answers make it proven: its
        posterior after them, each of noise variance ``sd^2 * max(observations, 1)`` (the
        noise its evidence implies: n observations made its sd), has a mean drawn from
        the preposterior ``N(skill, sd^2 - sd'^2)`` that clears ``floor + z sd'``."""
        if c.sd <= 0.0 or answers < 1:
            return 0.0
        prior = c.sd * c.sd
        after = 1.0 / (1.0 / prior + answers / (prior * max(c.observations, 1)))
        spread = math.sqrt(max(prior - after, 1e-18))
        return p_clear(c.skill, spread, self.value + self.z * math.sqrt(after))
