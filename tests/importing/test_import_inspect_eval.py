"""A log made by running a tiny Inspect eval (its mockllm model, offline) imports as the
rules say: one judgment per sample x epoch, its working time, its tokens at the prices."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from agentladder.cli import app

runner = CliRunner()


ROOT = Path(__file__).resolve().parents[2]


def test_a_real_eval_log_imports_by_the_rules(tmp_path: Path) -> None:
    """Two samples x two epochs with two scorers: four judgments (--scorer match), the
    model mapped by --agent, cost from the usage at the configured prices; again: none."""
    ran = subprocess.run(
        [sys.executable, "-m", "tests.importing.tiny_eval", str(tmp_path / "logs")],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    location = ran.stdout.strip().splitlines()[-1]
    assert location.endswith(".eval")
    log = read_eval_log(location)
    config = tmp_path / "c.yaml"
    config.write_text(
        "agents:\n  - name: mock\n    input_price_per_mtok: 1000\n    output_price_per_mtok: 2000\n"
    )
    db = tmp_path / "x.db"
    args = ["import", location, "--db", str(db), "--config", str(config),
            "--agent", "mockllm/model=mock", "--scorer", "match", "--json"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["imported"] == 4
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT agent_id, key, payload FROM oracle_events").fetchall()
    conn.close()
    events: dict[str, Any] = {key: json.loads(payload) for _, key, payload in rows}
    assert {agent for agent, _, _ in rows} == {"mock"}
    assert log.samples is not None
    for sample in log.samples:
        event = events[f"judgment:inspect:{log.eval.eval_id}:{sample.id}:{sample.epoch}"]
        assert event["task_type"] == "tiny_qa"
        value = sample.scores["match"].value if sample.scores else None
        assert event["score"] == {"C": 10.0, "I": 0.0}[str(value)]
        assert event["success"] is (value == "C")
        assert sample.working_time is not None
        assert event["duration_ms"] == pytest.approx(sample.working_time * 1000)
        usage = sample.model_usage["mockllm/model"]
        cost = (usage.input_tokens * 1000 + usage.output_tokens * 2000) / 1e6
        assert usage.output_tokens > 0
        assert event["cost"] == pytest.approx(cost)
    again = runner.invoke(app, args)
    assert json.loads(again.stdout)["duplicate"] == 4
