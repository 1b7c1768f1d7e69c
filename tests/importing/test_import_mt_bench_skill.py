"""Real judgments: MT-bench's GPT-4 scores of 8 models (tests/importing/mt_bench.py),
imported as `agentladder import` imports them, read back as the skill model fits them.

- the fitted overall order is the published one (no table covers these runs, so the
  published order is FastChat's `show_result.py`: each model's mean score over both turns,
  failed parses left out): Kendall's τ at least 0.93;
- what an honest average reads lies in the 95% interval: each model's plain mean score
  (on 0-10) overall and at each category, in at least 90% of the models and of the
  (model, category) cells;
- the same judgments in three shuffled orders give the same estimates (within 1e-6).
"""

from __future__ import annotations

import functools
import random
import tempfile
from pathlib import Path

from tests.importing.mt_bench import Judged, Reading, imported, judgments, kendall_tau, plain_means

SHUFFLES = (1, 2, 3)


@functools.cache
def _data() -> tuple[list[Judged], Reading]:
    rows = judgments()
    with tempfile.TemporaryDirectory() as folder:
        return rows, imported(rows, Path(folder))


def test_the_file_holds_every_model_at_every_category() -> None:
    """At least 6 models, each judged at the 8 categories (the checks below need them)."""
    rows, _ = _data()
    models = {r.model for r in rows}
    categories = {r.category for r in rows}
    assert len(models) >= 6
    assert len(categories) == 8
    assert {(r.model, r.category) for r in rows} == {(m, c) for m in models for c in categories}


def test_the_fitted_order_is_the_published_order() -> None:
    rows, reading = _data()
    means = plain_means(rows)
    published = {m: v for (m, scope), v in means.items() if scope is None}
    fitted = {m: e.skill for (m, scope), e in reading.items() if scope is None}
    tau = kendall_tau(fitted, published)
    shown = ", ".join(f"{m} {published[m]:.2f}/{fitted[m]:.2f}" for m in sorted(
        published, key=published.__getitem__, reverse=True))  # fmt: skip
    assert tau >= 0.93, f"τ {tau:.3f}; mean/skill: {shown}"


def test_plain_means_lie_in_the_intervals() -> None:
    rows, reading = _data()
    means = plain_means(rows)
    outside = {
        key: (value, reading[key]) for key, value in means.items()
        if not reading[key].low <= value <= reading[key].high
    }  # fmt: skip
    models = [key for key in means if key[1] is None]
    cells = [key for key in means if key[1] is not None]
    shown = "; ".join(
        f"{m} {c or 'overall'}: mean {v:.2f}, skill {e.skill:.2f} [{e.low:.2f}, {e.high:.2f}]"
        for (m, c), (v, e) in sorted(outside.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
    )
    inside_models = 1 - sum(k in outside for k in models) / len(models)
    inside_cells = 1 - sum(k in outside for k in cells) / len(cells)
    found = f"inside: {inside_models:.0%} of {len(models)} models, {inside_cells:.0%} of"
    found += f" {len(cells)} cells; outside: {shown}"
    assert inside_models >= 0.9, found
    assert inside_cells >= 0.9, found


def test_shuffled_orders_give_the_same_estimates(tmp_path: Path) -> None:
    rows, reading = _data()
    for seed in SHUFFLES:
        shuffled = list(rows)
        random.Random(seed).shuffle(shuffled)
        folder = tmp_path / str(seed)
        folder.mkdir()
        other = imported(shuffled, folder)
        assert other.keys() == reading.keys()
        worst = max(
            abs(getattr(other[key], field) - getattr(reading[key], field))
            for key in reading
            for field in ("skill", "sd", "low", "high")
        )
        assert worst <= 1e-6, f"shuffle {seed}: an estimate moved by {worst:.2e}"
