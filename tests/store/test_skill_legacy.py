"""A SQLite store written by the filter-only skill model (before the fit) still opens: its
agents' states read as absent until the next fit, which writes them anew from the log."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentladder.errors import CorruptRecord
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.store.skills import decode_state
from tests.importing.helpers import run_with_services

# An agent's state as the filter-only model stored it (taken from such a store): its
# evaluator kept a gamma noise (shape, rate) and a trust, where the fit keeps a variance
LEGACY_AGENT = {
    "agent_id": "a1",
    "overall": {"mean": 7.1, "var": 0.95, "n": 2, "at": 1.0, "drop": 0.0, "rise": 0.0},
    "evaluator": {
        "bias_mean": 0.0,
        "bias_var": 1.0,
        "noise_shape": 2.0,
        "noise_rate": 2.0,
        "trust": 2.2,
        "n": 0,
    },
    "types": {"math": {"mean": 6.5, "var": 1.7, "n": 1, "at": 1.0, "drop": 0.0, "rise": 0.0}},
    "model_changes": 0,
    "history": [[1.0, "math", 6.5, 1.3]],
}
LEGACY_FLEET = {
    "levels": {"math": {"mean": 5.0, "var": 1.0, "n": 1, "at": 1.0, "drop": 0.0, "rise": 0.0}},
    "offset_shape": 2.0,
    "offset_rate": 1.0,
    "leniency_weight": 0.0,
    "leniency_sum": 0.0,
    "leniency_squares": 0.0,
    "evaluators": 0,
}


def test_a_legacy_state_reads_as_absent_and_anything_else_unreadable_is_corrupt() -> None:
    assert decode_state(json.dumps(LEGACY_AGENT), "a1") is None
    with pytest.raises(CorruptRecord, match="a1"):
        decode_state('{"agent_id": "a1"}', "a1")
    with pytest.raises(CorruptRecord, match="a1"):
        decode_state("[1, 2", "a1")


def test_a_store_of_the_filter_only_model_opens_and_the_next_fit_rewrites_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "old.db"

    async def judge(services: Any) -> None:
        for n, score in enumerate((6.0, 8.0, 7.0)):
            request = {"agent_id": "a1", "contract_id": f"c{n}", "score": score}
            await services.oracle.submit_for_judgment(
                JudgmentRequest.model_validate({**request, "task_type": "math", "new_agent": True})
            )

    run_with_services(f"sqlite:///{db}", judge)
    with sqlite3.connect(db) as conn:  # as the filter-only model left it
        conn.execute(
            "UPDATE skill_states SET state_json = ? WHERE agent_id = 'a1'",
            (json.dumps(LEGACY_AGENT),),
        )
        conn.execute(
            "INSERT OR REPLACE INTO skill_states (agent_id, state_json, seq) VALUES (?, ?, 3)",
            ("=fleet", json.dumps(LEGACY_FLEET)),
        )
    conn.close()

    async def read_then_fit(services: Any) -> tuple[Any, Any, Any]:
        before = await services.store.get_skills(["a1"])
        listed = await services.store.list_skills()
        await services.skill.fit()
        found = await services.skill.of_agent("a1")
        return before, listed, (found.overall, found.task_types)

    before, listed, (entry, types) = run_with_services(f"sqlite:///{db}", read_then_fit)
    assert before == {}
    assert listed == []
    assert entry.observations == 3
    assert [t.task_type for t in types] == ["math"]
    assert 0.0 <= entry.low <= entry.skill <= entry.high <= 10.0
