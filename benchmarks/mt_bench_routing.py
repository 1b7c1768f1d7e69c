"""Public MT-bench judgments of priced models, as the routing benchmark reads them, and the
splits of their questions into history and held-out traffic.

The data: GPT-4's single-answer judgments (FastChat's ``gpt-4_single.jsonl``) of 10
models with public list prices or priced bases (``routing_prices.py``), 160 each (80
questions in 8 categories, 2 turns), each reduced to question_id, category, turn, model,
score (1-10), tstamp, and the characters the model was sent and wrote for that turn. It is
kept beside the repository, in the workplace's shared data
(``shared/data/mt_bench/routing_judgments.jsonl``, whose README gives the sources, their
commits and licenses, and how the file was made), or at the path in
``MT_BENCH_ROUTING_JUDGMENTS``; never in this repository.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.mt_bench_data import Judged, judged, read_judged, shared_path

__all__ = ["Answers", "Split", "answers", "path", "splits"]

PATH_VARIABLE = "MT_BENCH_ROUTING_JUDGMENTS"
NAME = "routing_judgments.jsonl"


def path() -> Path:
    """Where the routing judgments are: ``MT_BENCH_ROUTING_JUDGMENTS``, else the shared
    data."""
    return shared_path(PATH_VARIABLE, NAME)


@dataclass(frozen=True)
class Answers:
    """Every judgment, and the length of each judged answer and of what its model was sent:
    ``lengths[(model, question_id, turn)] = (prompt_chars, answer_chars)``."""

    rows: list[Judged]
    lengths: dict[tuple[str, int, int], tuple[int, int]]


def answers() -> Answers | None:
    """The routing judgments with a score (-1, a rating FastChat could not parse, left out);
    None where the file is not there."""
    lines = read_judged(path())
    if lines is None:
        return None
    lengths = {
        (str(r["model"]), int(r["question_id"]), int(r["turn"])): (
            int(r["prompt_chars"]), int(r["answer_chars"])
        )
        for r in lines
    }  # fmt: skip
    return Answers([judged(r) for r in lines], lengths)


@dataclass(frozen=True)
class Split:
    """Questions whose judgments (both turns) are the history, and the rest, held out."""

    name: str
    history: frozenset[int]
    held_out: frozenset[int]


def splits(rows: Sequence[Judged], randoms: int, seed: int) -> list[Split]:
    """Odd question ids as history and even held out; the swap; and ``randoms`` seeded
    random halves of each category's questions (a category keeps as many questions in its
    history as in the odd split: half, the odd half first when it is odd-sized)."""
    questions = sorted({r.question_id for r in rows})
    by_category: dict[str, list[int]] = {}
    for r in sorted(rows, key=lambda r: r.question_id):
        listed = by_category.setdefault(r.category, [])
        if r.question_id not in listed:
            listed.append(r.question_id)
    odd = frozenset(q for q in questions if q % 2)
    even = frozenset(questions) - odd
    out = [Split("odd history", odd, even), Split("even history", even, odd)]
    rng = random.Random(seed)
    for k in range(randoms):
        history: set[int] = set()
        for category in sorted(by_category):
            listed = by_category[category]
            half = sum(1 for q in listed if q in odd)
            history.update(rng.sample(listed, half))
        out.append(Split(f"random {k + 1}", frozenset(history), frozenset(questions) - history))
    return out
