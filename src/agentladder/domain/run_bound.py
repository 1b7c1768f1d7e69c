"""The per-run bound: a CSP-1 clearance for which the share of outputs that fail and go
unvalidated stays at or below ``aoql`` over a horizon of ``N`` tasks, in a share
``confidence`` of runs, whatever the failure rate.

CSP-1's AOQL (``probation.clearance_for``) bounds the long-run mean; where the AOQ peaks
about half of finite runs sit above it. Here the exact distribution of the number of
unvalidated failures over the ``N`` tasks that follow a failure found (the moment the
clearance takes control: probation with no passes) is computed from the CSP-1 Markov
chain, and the clearance is the least whose worst-case probability of exceeding
``aoql * N`` is at most ``1 - confidence`` (docs/oracle.md, "The per-run bound").

The chain, per task: on probation with ``k`` passes, the output is validated; a failure
the validator finds (probability ``p (1 - m)``) restarts at 0 passes, anything else counts
a pass, and ``i`` passes return to sampling. Sampling, the output is validated with
probability ``f`` (a found failure starts probation); not validated, it fails with
probability ``p``: one more unvalidated failure. The probation states are kept as the
mass that entered 0 passes at each step (mass at ``k`` passes at step ``t`` is the entry
at ``t - k`` times ``(1 - p (1 - m))^k``), so a step costs O(counts) and not
O(clearance x counts).
"""

from __future__ import annotations

import math
from functools import lru_cache

__all__ = ["DERIVED", "exceedance", "run_clearance", "search_clearance", "worst_exceedance"]

GRID = 48
"""Failure rates examined per clearance, log-spaced, before refining around the worst."""


def exceedance(p: float, f: float, i: int, aoql: float, horizon: int, miss: float = 0.0) -> float:
    """Probability that, over ``horizon`` tasks starting on probation with no passes, more
    than ``aoql * horizon`` of them fail and go unvalidated (CSP-1 with clearance ``i``,
    sampling fraction ``f``, failure rate ``p``, a validator missing ``miss`` of failures).
    """
    limit = math.floor(aoql * horizon + 1e-9)  # counts 0..limit are within the bound
    width = limit + 1
    found = p * (1.0 - miss)  # a validated output found failed
    passes = 1.0 - found  # a validated output counted as a pass
    # sampling, no unvalidated failure (with no clearance a found failure stays sampled)
    stay = (f if i == 0 else f * passes) + (1.0 - f) * (1.0 - p)
    slip = (1.0 - f) * p  # sampling, not validated, failed
    cleared = passes**i  # entry mass that reaches i passes i steps later
    sampling = [0.0] * width
    running = [0.0] * width  # the probation mass, sum over k < i of entry[t - k] q^k
    entries: list[list[float]] = []  # entry mass per step (only the last i are needed)
    if i == 0:
        sampling[0] = 1.0
    else:
        running[0] = 1.0
        entries.append([1.0] + [0.0] * limit)
    for t in range(horizon):
        entry = [found * running[u] + f * found * sampling[u] for u in range(width)]
        leaving = entries[t + 1 - i] if i > 0 and t + 1 - i >= 0 else None
        nxt = [stay * sampling[u] for u in range(width)]
        for u in range(1, width):
            nxt[u] += slip * sampling[u - 1]
        if leaving is not None:
            for u in range(width):
                nxt[u] += cleared * leaving[u]
                running[u] = entry[u] + passes * (running[u] - cleared / passes * leaving[u])
        elif i > 0:
            for u in range(width):
                running[u] = entry[u] + passes * running[u]
        sampling = nxt
        if i > 0:
            entries.append(entry)
    kept = sum(sampling) + (sum(running) if i > 0 else 0.0)
    return min(1.0, max(0.0, 1.0 - kept))


def _grid(aoql: float) -> list[float]:
    """Failure rates from aoql / 4 to 0.5, log-spaced (below aoql / 4 the mean count is
    under a quarter of the bound; above 0.5 nearly every output is on probation)."""
    lo, hi = math.log(aoql / 4.0), math.log(0.5)
    return [math.exp(lo + (hi - lo) * k / (GRID - 1)) for k in range(GRID)]


def worst_exceedance(
    f: float, i: int, aoql: float, horizon: int, miss: float = 0.0, stop: float = 1.0
) -> float:
    """The largest ``exceedance`` over failure rates (a log grid, then a golden-section
    refinement around its worst point); returns early once it passes ``stop``."""
    grid = _grid(aoql)
    values = []
    for p in grid:
        value = exceedance(p, f, i, aoql, horizon, miss)
        if value > stop:
            return value
        values.append(value)
    k = max(range(GRID), key=values.__getitem__)
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, GRID - 1)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    best = values[k]
    for _ in range(12):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        ea, eb = (exceedance(x, f, i, aoql, horizon, miss) for x in (a, b))
        best = max(best, ea, eb)
        if best > stop:
            return best
        if ea < eb:
            lo = a
        else:
            hi = b
    return best


DERIVED: dict[tuple[float, float, int, float, float], int] = {
    (0.2, 0.02, 1000, 0.95, 0.0): 60,
    (0.05, 0.02, 1000, 0.95, 0.0): 125,
    (0.02, 0.02, 1000, 0.95, 0.0): 144,
}
"""``search_clearance`` of the default settings' sampling fractions (reliable, trusted,
an expert audited at 0.02), keyed by its arguments: the search takes about two seconds a
fraction, which would stall the first rate request of a process. A test recomputes every
entry; any other settings are searched once and cached."""


def run_clearance(f: float, aoql: float, horizon: int, confidence: float, miss: float = 0.0) -> int:
    """``search_clearance``, from ``DERIVED`` when the arguments are there."""
    known = DERIVED.get((f, aoql, horizon, confidence, miss))
    return known if known is not None else search_clearance(f, aoql, horizon, confidence, miss)


@lru_cache(maxsize=256)
def search_clearance(
    f: float, aoql: float, horizon: int, confidence: float, miss: float = 0.0
) -> int:
    """The least clearance for which, at sampling fraction ``f``, every failure rate keeps
    the unvalidated share over ``horizon`` tasks after a failure found at or below
    ``aoql`` with probability at least ``confidence``.

    ``horizon`` passes always suffice (probation then outlasts the horizon), so the
    search is a bisection on [0, horizon]; the exceedance falls as the clearance grows.
    """
    if not 0.0 < f <= 1.0:
        raise ValueError(f"sampling fraction must be in (0, 1], not {f}")
    if horizon < 1:
        raise ValueError(f"horizon must be at least 1 task, not {horizon}")
    allowed = 1.0 - confidence
    if f >= 1.0:
        return 0
    if worst_exceedance(f, 0, aoql, horizon, miss, allowed) <= allowed:
        return 0
    lo, hi = 0, horizon
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if worst_exceedance(f, mid, aoql, horizon, miss, allowed) > allowed:
            lo = mid
        else:
            hi = mid
    return hi
