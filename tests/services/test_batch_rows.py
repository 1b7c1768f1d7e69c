"""The batch path (``submit_many``, what ``agentladder import`` runs) stores exactly the
rows that submitting the same judgments one by one (``submit_for_judgment``) stores: every
row of every table the Oracle and the skill evidence write, on SQLite."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentladder.config import parse_settings
from agentladder.errors import PayloadConflict
from agentladder.services.clock import FixedClock
from agentladder.services.container import build_services
from agentladder.services.oracle.batch import submit_many
from agentladder.services.oracle.models import JudgmentRequest

START = datetime(2026, 3, 1, tzinfo=UTC)
TABLES = {
    "oracle_events": "agent_id, key, seq, kind, payload, payload_hash, result, lines, at",
    "xp_history": "id, agent_id, event, xp_awarded, contract_id, timestamp",
    "agent_profiles": "id, provider, model, xp, level, total_tasks, total_xp_earned,"
    " total_cost, average_score, success_rate, revision, profile_json",
    "specializations": "agent_id, task_type, xp, level, tasks_completed, avg_score,"
    " best_score, current_streak, tasks_judged",
    "achievements": "agent_id, achievement, awarded_at, xp",
    "skill_events": "seq, key, kind, payload, payload_hash, at",
    "skill_states": "agent_id, state_json, seq",
}
"""Every column but the row's wall-clock ``created_at`` and ``updated_at``."""

judgments = st.fixed_dictionaries(
    {
        "agent_id": st.sampled_from(["a", "b", "c", "d"]),
        "contract_id": st.integers(0, 40).map(lambda n: f"c-{n}"),  # repeats and conflicts
        "task_type": st.sampled_from(["sql", "code", "docs"]),
        "success": st.booleans(),
        "retries": st.integers(0, 2),
        "cost": st.sampled_from([0.0, 0.01, 0.05]),
    },
    optional={
        "score": st.sampled_from([0.0, 3.0, 8.5, 9.5, 10.0]),
        "budget": st.just(0.04),
        "duration_ms": st.integers(100, 60_000),
        "time_limit_ms": st.just(30_000),
        "judge": st.sampled_from(["gpt-4o", "human:ann"]),
        "observed_at": st.integers(1, 500).map(lambda h: START - timedelta(hours=h)),
        "complexity": st.sampled_from(["simple", "complex"]),
        "provider": st.just("acme"),
        "history": st.booleans(),
    },
)


def _requests(lines: list[dict[str, Any]]) -> list[JudgmentRequest]:
    return [JudgmentRequest.model_validate({**line, "new_agent": True}) for line in lines]


async def _stored(url: str, lines: list[dict[str, Any]], batches: list[int] | None) -> None:
    """Apply ``lines`` one by one (``batches`` None) or in batches of those sizes (cycled)."""
    services = await build_services(parse_settings(None), store_url=url, clock=FixedClock(START))
    try:
        requests = _requests(lines)
        if batches is None:
            for request in requests:
                with contextlib.suppress(PayloadConflict):  # stored nothing, as a batch
                    await services.oracle.submit_for_judgment(request)
            return
        first, turn = 0, 0
        while first < len(requests):
            size = batches[turn % len(batches)]
            await submit_many(services.oracle, requests[first : first + size])
            first, turn = first + size, turn + 1
    finally:
        await services.close()


def _rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(db)
    try:
        return {
            table: conn.execute(f"SELECT {columns} FROM {table} ORDER BY 1, 2").fetchall()
            for table, columns in TABLES.items()
        }
    finally:
        conn.close()


@settings(
    derandomize=True, max_examples=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(
    lines=st.lists(judgments, min_size=1, max_size=60),
    batches=st.lists(st.integers(1, 25), min_size=1, max_size=4),
)
def test_a_batch_stores_the_rows_one_by_one_stores(
    lines: list[dict[str, Any]], batches: list[int]
) -> None:
    """Generated judgments (repeats, conflicting repeats, failures, every optional field)
    leave the same rows, column for column, whether submitted one by one or in batches of
    any sizes."""
    with tempfile.TemporaryDirectory() as name:
        single, batched = Path(name) / "single.db", Path(name) / "batched.db"
        asyncio.run(_stored(f"sqlite:///{single}", lines, None))
        asyncio.run(_stored(f"sqlite:///{batched}", lines, batches))
        expected, found = _rows(single), _rows(batched)
    assert expected["oracle_events"], "nothing was stored"
    for table in TABLES:
        assert found[table] == expected[table], table
