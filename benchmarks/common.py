"""Timing helpers shared by the benchmarks: medians of repeated runs, ratio lines."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

__all__ = ["median_rate", "percentile", "report_ratio", "timed"]


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_rate(fn: Callable[[], int], runs: int) -> tuple[float, list[float]]:
    """Median operations per second of ``fn`` (which returns how many it did) over ``runs``."""
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        count = fn()
        rates.append(count / (time.perf_counter() - start))
    return statistics.median(rates), rates


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile of ``samples`` (q from 0 to 100)."""
    ordered = sorted(samples)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def report_ratio(name: str, value: float, baseline: float, unit: str, target: float) -> None:
    """Print one figure beside its baseline, their ratio and the target ratio."""
    ratio = value / baseline
    verdict = "meets" if ratio >= target else "MISSES"
    print(
        f"{name}: {value:,.0f} {unit} vs baseline {baseline:,.0f} {unit}:"
        f" ratio {ratio:.2f} ({verdict} target >= {target})"
    )
