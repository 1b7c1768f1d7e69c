"""A small symmetric positive-definite solve, in plain Python floats.

The evidence model solves one system per deliberation (a dozen unknowns or so). Plain
Python loops keep every sum in one fixed order, so the same inputs give the same bits on
every machine, which replay compares exactly; a BLAS call could reorder sums (and the
built-in ``sum`` of floats is not used: its rounding changed in Python 3.12).
"""

from __future__ import annotations

import math
from operator import mul

__all__ = ["gaussian_posterior"]


def gaussian_posterior(
    precision: list[list[float]], shift: list[float]
) -> tuple[list[float], list[list[float]]]:
    """Mean and covariance of the Gaussian with this precision matrix and precision-times-
    mean vector: ``P⁻¹ h`` and ``P⁻¹``, by Cholesky factorization (``P`` is changed)."""
    n = len(shift)
    low = precision
    for j in range(n):
        row_j = low[j]
        total = row_j[j]
        for k in range(j):
            total -= row_j[k] * row_j[k]
        if total <= 0.0:
            raise ValueError(f"precision matrix is not positive definite at {j} ({total})")
        pivot = math.sqrt(total)
        row_j[j] = pivot
        for i in range(j + 1, n):
            row_i = low[i]
            value = row_i[j]
            for k in range(j):
                value -= row_i[k] * row_j[k]
            row_i[j] = value / pivot
    # columns of L⁻¹ (lower triangular): col[j][k] = (L⁻¹)[k][j], zero for k < j
    col = [[0.0] * n for _ in range(n)]
    for j in range(n):
        c = col[j]
        c[j] = 1.0 / low[j][j]
        for i in range(j + 1, n):
            row_i = low[i]
            value = 0.0
            for k in range(j, i):
                value -= row_i[k] * c[k]
            c[i] = value / row_i[i]
    # covariance = (L⁻¹)ᵀ L⁻¹
    cov = [[0.0] * n for _ in range(n)]
    for i in range(n):
        ci = col[i]
        cov_i = cov[i]
        for j in range(i + 1):
            cj = col[j]
            value = 0.0
            for k in range(i, n):
                value += ci[k] * cj[k]
            cov_i[j] = value
            cov[j][i] = value
    mean = [0.0] * n
    for i in range(n):
        row = cov[i]
        value = 0.0
        for k in range(n):
            value += row[k] * shift[k]
        mean[i] = value
    return mean, cov


def gaussian_posterior_split(
    precision: list[list[float]], shift: list[float], heads: int
) -> tuple[list[float], list[list[float]]]:
    """``gaussian_posterior`` for a precision matrix whose first ``heads`` unknowns do not
    touch each other (their block is diagonal, as authors' qualities are: each score has
    one author). The other unknowns' block is solved by Cholesky after the heads are
    eliminated (their Schur complement), which costs a fraction of the whole. The
    covariances between two different heads are not computed (left 0). Dot products are
    ``math.fsum`` (correctly rounded, the same on every machine and Python version)."""
    n = len(shift)
    if heads == 0:
        return gaussian_posterior(precision, shift)
    fsum = math.fsum
    d = [precision[a][a] for a in range(heads)]
    cross = [precision[a][heads:] for a in range(heads)]  # C: heads x rest
    scaled = [[c / d[a] for c in cross[a]] for a in range(heads)]  # D⁻¹ C
    by_rest = list(zip(*cross, strict=True))  # by_rest[i][a] = C[a][i]
    by_rest_scaled = list(zip(*scaled, strict=True))
    head_shift = [shift[a] / d[a] for a in range(heads)]
    schur = [
        [
            m - fsum(map(mul, ci, sj))
            for m, sj in zip(precision[heads + i][heads:], by_rest_scaled, strict=True)
        ]
        for i, ci in enumerate(by_rest)
    ]
    reduced = [shift[heads + i] - fsum(map(mul, ci, head_shift)) for i, ci in enumerate(by_rest)]
    tail_mean, tail_cov = gaussian_posterior(schur, reduced)
    cov = [[0.0] * heads + row for row in ([0.0] * (n - heads) for _ in range(heads))]
    cov.extend([0.0] * heads + row for row in tail_cov)
    mean = [0.0] * heads + tail_mean
    for a in range(heads):
        sa = scaled[a]
        mean[a] = head_shift[a] - fsum(map(mul, sa, tail_mean))
        entries = [-fsum(map(mul, sa, column)) for column in tail_cov]  # Σ_aM = -D⁻¹ C S⁻¹
        row_a = cov[a]
        row_a[heads:] = entries
        for j, entry in enumerate(entries):
            cov[heads + j][a] = entry
        row_a[a] = 1.0 / d[a] - fsum(map(mul, entries, sa))
    return mean, cov
