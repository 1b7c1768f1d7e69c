"""cheapest_above for one task to one agent (``count`` 1, no exploration), restated as pure
functions over the candidates routing sees at one task type, and variants of it measured
beside it (the service's rule lives in ``domain/routing/select.py``; these are the
benchmark's, to measure alternatives, not the service's).

- ``current``: the service's rule. The reference is the highest lower bound (ties: the
  agent id); the floor ``share`` of its skill; an agent is proven when ``skill - z sd >=
  floor`` (``z`` the confidence's normal quantile), and the reference always is (the
  floor is a share of it); the cheapest proven is chosen (ties on cost: the higher lower
  bound). The replay checks that it picks what ``RoutingService.route`` picked, every
  time.
- ``plain_table``: the candidates with the skill model's estimates replaced by each
  agent's plain mean at the task type and its standard error (sample sd over the square
  root of the count): the same rule on unshrunk estimates that count every score in full,
  to tell the rule's part from the estimates' part.
- ``likeliest``: the rule before the reference always qualified: when nobody is proven,
  the likeliest to clear the floor (highest posterior probability) among those whose 95%
  interval reaches it, which need not be cheaper than the reference (at a floor of 1.0 of
  the reference's skill, the reference is proven with probability 0.5 at most, and the
  likeliest can be the dearest agent).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from statistics import NormalDist

from agentladder.domain.routing.floor import p_clear
from agentladder.domain.routing.table import Candidate
from agentladder.domain.scales import to_ten
from benchmarks.mt_bench_data import Judged

__all__ = ["VARIANTS", "current", "likeliest", "plain_table"]

Z95 = 1.959963984540054

Rule = Callable[[Sequence[Candidate], float, float], str]


def _reference(candidates: Sequence[Candidate]) -> Candidate:
    return min(candidates, key=lambda c: (-c.low, c.agent_id))


def _by_cost(candidates: Sequence[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (c.cost, -c.low, c.agent_id))


def _proven(candidates: Sequence[Candidate], floor: float, confidence: float) -> list[Candidate]:
    z = NormalDist().inv_cdf(confidence)
    return [c for c in _by_cost(candidates) if c.skill - z * c.sd >= floor]


def current(candidates: Sequence[Candidate], share: float, confidence: float) -> str:
    """The service's choice: the cheapest of the proven agents and the reference."""
    reference = _reference(candidates)
    floor = round(share * reference.skill, 6)
    kept = [*_proven(candidates, floor, confidence), reference]
    return min(kept, key=lambda c: (c.cost, -c.low, c.agent_id)).agent_id


def likeliest(candidates: Sequence[Candidate], share: float, confidence: float) -> str:
    """The cheapest proven, the reference not counted as such; when none is, the likeliest
    to clear the floor among those whose 95% interval reaches it."""
    floor = round(share * _reference(candidates).skill, 6)
    proven = _proven(candidates, floor, confidence)
    if proven:
        return proven[0].agent_id
    reaching = [c for c in _by_cost(candidates) if c.skill + Z95 * c.sd >= floor]
    return min(reaching, key=lambda c: -p_clear(c.skill, c.sd, floor)).agent_id


def plain_table(
    seen: Mapping[str, Sequence[Candidate]], history: Sequence[Judged]
) -> dict[str, list[Candidate]]:
    """``seen`` (task type -> candidates) with each candidate's skill, sd and lower bound
    replaced by its plain mean at the type (0-10), that mean's standard error and the mean
    minus 1.96 of them (one score: the spread of all its scores at the type stands in)."""
    scores: dict[tuple[str, str], list[float]] = {}
    for r in history:
        scores.setdefault((r.model, r.category), []).append(to_ten(r.score, "1-10"))
    out: dict[str, list[Candidate]] = {}
    for task_type, candidates in seen.items():
        out[task_type] = []
        for c in candidates:
            values = scores[(c.agent_id, task_type)]
            spread = statistics.stdev(values) if len(values) > 1 else 3.0
            mean, error = statistics.fmean(values), spread / math.sqrt(len(values))
            out[task_type].append(
                replace(c, skill=mean, sd=error, low=mean - Z95 * error, observations=len(values))
            )
    return out


VARIANTS: dict[str, Rule] = {"likeliest": likeliest}
"""The variants the benchmark measures beside the service's rule, by name."""
