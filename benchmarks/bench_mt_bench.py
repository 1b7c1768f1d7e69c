"""Real judgments: MT-bench's GPT-4 scores of 8 models (``benchmarks/mt_bench_data.py``),
imported as ``agentladder import`` imports them, read back as the skill model fits them.

- the fitted overall order against the published one (no table covers these runs, so the
  published order is FastChat's ``show_result.py``: each model's mean score over both
  turns, failed parses left out): Kendall's τ, target at least 0.93;
- what an honest average reads lies in the 95% interval: each model's plain mean score
  (on 0-10) overall and at each category, target at least 90% of the models and of the
  (model, category) cells;
- the same judgments in three shuffled orders (seeds 1-3) give the same estimates: the
  largest change, target at most 1e-6.

The file is public data of other projects and is not in this repository: it is read from
``shared/data/mt_bench/judgments.jsonl`` beside the repository or ``MT_BENCH_JUDGMENTS``
(docs/benchmarks.md says where it came from). Without it the benchmark says so and stops.

    .venv/bin/python -m benchmarks mt_bench
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from benchmarks.mt_bench_data import imported, judgments, kendall_tau, path, plain_means

SHUFFLES = (1, 2, 3)


def main() -> None:
    rows = judgments()
    if rows is None:
        print(f"the MT-bench judgments are not at {path()}: set MT_BENCH_JUDGMENTS")
        return
    with tempfile.TemporaryDirectory() as folder:
        reading = imported(rows, Path(folder))
        means = plain_means(rows)
        published = {m: v for (m, scope), v in means.items() if scope is None}
        fitted = {m: e.skill for (m, scope), e in reading.items() if scope is None}
        print(f"{len(rows)} judgments of {len(published)} models")
        print(f"{'model':<36} {'mean':>6} {'skill':>6} {'sd':>5} {'low':>6} {'high':>6}")
        for model in sorted(published, key=published.__getitem__, reverse=True):
            e = reading[(model, None)]
            print(f"{model:<36} {published[model]:6.2f} {e.skill:6.2f} {e.sd:5.2f}"
                  f" {e.low:6.2f} {e.high:6.2f}")  # fmt: skip
        print(f"Kendall's tau against the published order: {kendall_tau(fitted, published):.3f}"
              " (target >= 0.93)")  # fmt: skip
        outside = [k for k, v in means.items() if not reading[k].low <= v <= reading[k].high]
        models = [k for k in means if k[1] is None]
        cells = [k for k in means if k[1] is not None]
        in_models = sum(k not in outside for k in models)
        in_cells = sum(k not in outside for k in cells)
        print(f"plain means inside the 95% interval: {in_models} of {len(models)} models,"
              f" {in_cells} of {len(cells)} cells (target >= 90%)")  # fmt: skip
        for model, scope in sorted(outside, key=lambda k: (k[0], k[1] or "")):
            e = reading[(model, scope)]
            print(f"  outside: {model} {scope or 'overall'}: mean"
                  f" {means[(model, scope)]:.2f}, [{e.low:.2f}, {e.high:.2f}]")  # fmt: skip
        worst = 0.0
        for seed in SHUFFLES:
            shuffled = list(rows)
            random.Random(seed).shuffle(shuffled)
            sub = Path(folder) / str(seed)
            sub.mkdir()
            other = imported(shuffled, sub)
            fields = ("skill", "sd", "low", "high")
            moved = [abs(getattr(other[k], f) - getattr(reading[k], f))
                     for k in reading for f in fields]  # fmt: skip
            worst = max(worst, *moved)
        print(f"largest change over {len(SHUFFLES)} shuffled orders: {worst:.1e} (target <= 1e-6)")
