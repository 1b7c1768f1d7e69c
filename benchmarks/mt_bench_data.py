"""Public MT-bench judgments as `agentladder import` takes them, and what the skill model
reads of them.

The data: GPT-4's single-answer judgments (FastChat's `gpt-4_single.jsonl`) of 8 models,
160 each (80 questions in 8 categories, 2 turns), reduced to question_id, category, turn,
model, score (1-10; -1 where GPT-4's rating could not be parsed) and tstamp. It is kept
beside the repository, in the workplace's shared data (`shared/data/mt_bench/`, whose
README gives the sources, their commits and licenses, and how the file was made), or at
the path in ``MT_BENCH_JUDGMENTS``.

Each judgment is one JSONL line of the import: the model is the agent, the category the
task type, the score on the `1-10` scale (1 is 0, 10 is 10), GPT-4 the judge, the
judgment's time its `observed_at`. The lines go through the import's own reader and
``run_import`` on the in-memory store, fit included. Every estimate is read now, years
after the judgments: imported history does not drift with the calendar (docs/skill.md,
"Time"; until 2026-12-07 it was read at each model's latest judgment, since an estimate
read later widened with the days since).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentladder.config import parse_settings
from agentladder.domain.scales import to_ten
from agentladder.domain.skill.board import SkillEntry, skill_view
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.container import build_services
from benchmarks.fidelity_methods import kendall_tau

__all__ = [
    "Judged",
    "Reading",
    "imported",
    "judgments",
    "kendall_tau",
    "plain_means",
]

PATH_VARIABLE = "MT_BENCH_JUDGMENTS"
ROOT = Path(__file__).resolve().parents[1]
WHERE = Path("shared", "data", "mt_bench", "judgments.jsonl")
SHARED = (ROOT.parent / WHERE, ROOT / WHERE)
"""The shared data beside the repository's folder, or inside it (never committed: the
judgments are public data of other projects, kept out of this repository)."""
JUDGE = "gpt-4"

Reading = dict[tuple[str, str | None], SkillEntry]
"""Every (model, scope) estimate: scope None is overall, else a category."""


@dataclass(frozen=True)
class Judged:
    """One judgment: the model's answer to a question's turn, scored 1-10 by GPT-4."""

    question_id: int
    category: str
    turn: int
    model: str
    score: float
    tstamp: float


def path() -> Path:
    """Where the judgments are: ``MT_BENCH_JUDGMENTS``, else the shared data."""
    given = os.environ.get(PATH_VARIABLE)
    if given:
        return Path(given)
    return next((p for p in SHARED if p.is_file()), SHARED[0])


def judgments() -> list[Judged] | None:
    """Every judgment with a score (a failed parse, -1, is left out as FastChat's
    `show_result.py` leaves it out); None where the file is not there."""
    where = path()
    if not where.is_file():
        return None
    rows = [Judged(**json.loads(line)) for line in where.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.score != -1]


def line(judged: Judged) -> dict[str, object]:
    """The judgment as a JSONL line of `agentladder import`."""
    return {
        "agent_id": judged.model,
        "contract_id": f"mt-bench-{judged.question_id}-turn-{judged.turn}",
        "task_type": judged.category,
        "score": judged.score,
        "scale": "1-10",
        "judge": JUDGE,
        "observed_at": datetime.fromtimestamp(judged.tstamp, UTC).isoformat(),
    }


def imported(rows: Sequence[Judged], folder: Path) -> Reading:
    """The judgments, in the order given, imported into a new in-memory store and fitted;
    each model's estimates overall and at every category, read at its latest judgment."""
    file = folder / "judgments.jsonl"
    file.write_text("".join(json.dumps(line(r)) + "\n" for r in rows))
    now = time.time()
    latest = dict.fromkeys(sorted({r.model for r in rows}), now)
    categories = sorted({r.category for r in rows})
    return asyncio.run(_imported(file, latest, categories))


async def _imported(file: Path, latest: Mapping[str, float], categories: list[str]) -> Reading:
    services = await build_services(parse_settings(None), store_url="memory://")
    try:
        summary = await run_import(services.oracle, read_jsonl(file))
        if summary.imported != summary.items:
            raise RuntimeError(f"import refused judgments: {summary.problems[:3]}")
        states = {s.agent_id: s for s in await services.store.list_skills()}
        fleet = await services.store.get_fleet_skill()
        rules = services.settings.skill
        return {
            (model, scope): skill_view(states[model], fleet, scope, at, rules)
            for model, at in latest.items()
            for scope in (None, *categories)
        }
    finally:
        await services.close()


def plain_means(rows: Sequence[Judged]) -> dict[tuple[str, str | None], float]:
    """Each model's mean score on 0-10 (the import's map of 1-10), overall (all its
    judgments, as `show_result.py` averages them) and per category."""
    given: dict[tuple[str, str | None], list[float]] = {}
    for r in rows:
        value = to_ten(r.score, "1-10")
        given.setdefault((r.model, None), []).append(value)
        given.setdefault((r.model, r.category), []).append(value)
    return {key: statistics.fmean(values) for key, values in given.items()}
