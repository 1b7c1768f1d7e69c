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
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentladder.config import parse_settings
from agentladder.domain.scales import to_ten
from agentladder.domain.skill.board import SkillEntry, skill_view
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.container import Services, build_services
from benchmarks.fidelity_methods import kendall_tau

__all__ = [
    "Judged",
    "Reading",
    "imported",
    "imported_services",
    "judged",
    "judgments",
    "kendall_tau",
    "plain_means",
    "read_judged",
    "shared_path",
]

PATH_VARIABLE = "MT_BENCH_JUDGMENTS"
ROOT = Path(__file__).resolve().parents[1]
FOLDER = Path("shared", "data", "mt_bench")
"""The shared data, beside the repository's folder or inside it (never committed: the
judgments are public data of other projects, kept out of this repository)."""
NAME = "judgments.jsonl"
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


def shared_path(variable: str, name: str) -> Path:
    """Where a file of the shared MT-bench data is: the path in the environment variable
    ``variable``, else ``shared/data/mt_bench/<name>`` beside the repository (or in it)."""
    given = os.environ.get(variable)
    if given:
        return Path(given)
    shared = [root / FOLDER / name for root in (ROOT.parent, ROOT)]
    return next((p for p in shared if p.is_file()), shared[0])


def path() -> Path:
    """Where the judgments are: ``MT_BENCH_JUDGMENTS``, else the shared data."""
    return shared_path(PATH_VARIABLE, NAME)


def judged(row: Mapping[str, Any]) -> Judged:
    """The judgment of a line of a judgments file (its other fields left out)."""
    return Judged(
        question_id=int(row["question_id"]), category=str(row["category"]),
        turn=int(row["turn"]), model=str(row["model"]), score=float(row["score"]),
        tstamp=float(row["tstamp"]),
    )  # fmt: skip


def read_judged(where: Path) -> list[dict[str, Any]] | None:
    """The lines of a judgments file that have a score (a failed parse, -1, is left out as
    FastChat's `show_result.py` leaves it out), each a dict of its fields; None where the
    file is not there."""
    if not where.is_file():
        return None
    rows = [json.loads(line) for line in where.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["score"] != -1]


def judgments() -> list[Judged] | None:
    """Every judgment with a score; None where the file is not there."""
    rows = read_judged(path())
    if rows is None:
        return None
    return [judged(r) for r in rows]


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
    now = time.time()
    latest = dict.fromkeys(sorted({r.model for r in rows}), now)
    categories = sorted({r.category for r in rows})
    return asyncio.run(_imported(rows, folder, latest, categories))


@asynccontextmanager
async def imported_services(
    rows: Sequence[Judged], folder: Path, config: Mapping[str, Any] | None = None
) -> AsyncIterator[Services]:
    """The services of a new in-memory store into which the judgments were imported, in
    the order given, as ``agentladder import --scale 1-10`` imports them (fit included);
    closed on leaving. ``config``: the configuration document (none: the defaults)."""
    file = folder / "judgments.jsonl"
    file.write_text("".join(json.dumps(line(r)) + "\n" for r in rows))
    services = await build_services(parse_settings(config), store_url="memory://")
    try:
        summary = await run_import(services.oracle, read_jsonl(file))
        if summary.imported != summary.items:
            raise RuntimeError(f"import refused judgments: {summary.problems[:3]}")
        yield services
    finally:
        await services.close()


async def _imported(
    rows: Sequence[Judged], folder: Path, latest: Mapping[str, float], categories: list[str]
) -> Reading:
    async with imported_services(rows, folder) as services:
        states = {s.agent_id: s for s in await services.store.list_skills()}
        fleet = await services.store.get_fleet_skill()
        rules = services.settings.skill
        return {
            (model, scope): skill_view(states[model], fleet, scope, at, rules)
            for model, at in latest.items()
            for scope in (None, *categories)
        }


def plain_means(rows: Sequence[Judged]) -> dict[tuple[str, str | None], float]:
    """Each model's mean score on 0-10 (the import's map of 1-10), overall (all its
    judgments, as `show_result.py` averages them) and per category."""
    given: dict[tuple[str, str | None], list[float]] = {}
    for r in rows:
        value = to_ten(r.score, "1-10")
        given.setdefault((r.model, None), []).append(value)
        given.setdefault((r.model, r.category), []).append(value)
    return {key: statistics.fmean(values) for key, values in given.items()}
