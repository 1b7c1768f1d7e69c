"""The exact fit's dense solve: the covariance from LAPACK's ``potrf`` and ``potri``
(``domain/skill/system._inverse``, this code) against the way before it (NumPy's Cholesky
factor, its general inverse, and that inverse's product with its transpose), on the same
matrices in the same run; and a whole fit of the HTTP benchmark's shape.

- solve: symmetric positive definite matrices of 1,000 and 2,000 unknowns (seed 11), one
  BLAS thread as ``serve`` fits; alternating, medians of 5; the largest difference of
  the two covariances beside.
- fit: 30,000 judgments of 1,000 agents in one task type (seed 7), ``fit_observations``
  on one BLAS thread, median of 3, by the exact solver (its 2,003 unknowns were under the
  default ``exact_limit`` until it went from 3,000 to 1,000) and by the large one (the
  default now).

Run: ``make bench`` or ``.venv/bin/python -m benchmarks fit_solve``.
"""

from __future__ import annotations

import random
import statistics
import time

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from agentladder.domain.skill import SkillRules, fit_observations, observations_of
from agentladder.domain.skill.evidence import ScoreEvidence
from agentladder.domain.skill.system import _inverse

Floats = npt.NDArray[np.float64]


def _before(precision: Floats) -> Floats:
    """The covariance as the code before computed it."""
    inverse = np.linalg.inv(np.linalg.cholesky(precision))
    cov: Floats = inverse.T @ inverse
    return cov


def _timed(fn: object, matrix: Floats) -> tuple[float, Floats]:
    start = time.perf_counter()
    result = fn(matrix)  # type: ignore[operator]
    return time.perf_counter() - start, result


def main() -> None:
    """Print the solve's times and ratio at two sizes, then a whole fit's time."""
    rng = np.random.default_rng(11)
    with threadpool_limits(limits=1, user_api="blas"):
        for n in (1000, 2000):
            half = rng.standard_normal((n, n))
            precision = half @ half.T + n * np.eye(n)
            times: dict[str, list[float]] = {"potri": [], "before": []}
            gap = 0.0
            for run in range(5):
                order = ("potri", "before") if run % 2 == 0 else ("before", "potri")
                found = {}
                for name in order:
                    took, found[name] = _timed(_inverse if name == "potri" else _before, precision)
                    times[name].append(took)
                gap = max(gap, float(np.abs(found["potri"] - found["before"]).max()))
            now, then = statistics.median(times["potri"]), statistics.median(times["before"])
            print(f"dense solve, {n:,} unknowns: potrf+potri {now * 1e3:,.0f} ms,"
                  f" before {then * 1e3:,.0f} ms: ratio {now / then:.2f};"
                  f" largest difference {gap:.1e}")  # fmt: skip
        draw = random.Random(7)
        evidence = [
            ScoreEvidence(key=f"j{i}", at=1e6 + i, agent_id=f"agent-{i % 1000}", task_type="audit",
                          score=round(draw.uniform(0, 10), 1), success=True)
            for i in range(30_000)
        ]  # fmt: skip
        observations = observations_of(evidence)
        for name, limit in (("exact", 3000), ("large", 0)):
            spent: list[float] = []
            for _ in range(3):
                start = time.perf_counter()
                fit_observations(observations, SkillRules(exact_limit=limit))
                spent.append(time.perf_counter() - start)
            median = statistics.median(spent)
            print(f"fit of 30,000 judgments, 1,000 agents, one task type, {name} solver:"
                  f" median {median:.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
