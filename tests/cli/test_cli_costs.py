"""`agentladder deliberate` says what the deliberation cost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app

CONFIG = """
store: sqlite:///{db}
agents:
  - name: sim_a
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10.0
    backend: {{kind: simulated, quality: 6.0}}
  - name: sim_b
    input_price_per_mtok: 0.5
    output_price_per_mtok: 1.5
    backend: {{kind: simulated, quality: 9.0}}
"""


def test_deliberate_prints_the_total_cost(tmp_path: Path) -> None:
    """deliberate ends with `cost: $X`, the record's total_cost (also in --json)."""
    config = tmp_path / "agents.yaml"
    config.write_text(CONFIG.format(db=tmp_path / "cli.db"), encoding="utf-8")
    runner = CliRunner()
    args = ["deliberate", "Which is best?", "--agent", "sim_a", "--agent", "sim_b",
            "--scope", "quick", "--config", str(config), "--create"]  # fmt: skip
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    found = re.search(r"^cost: \$(\d+\.\d{4})$", shown.output, re.M)
    assert found is not None, shown.output
    assert float(found.group(1)) > 0
    as_json = runner.invoke(app, [*args, "--json"])
    assert as_json.exit_code == 0, as_json.output
    record = json.loads(as_json.stdout)  # its progress is on stderr
    assert record["total_cost"] > 0
    assert record["total_cost"] == pytest.approx(sum(record["agent_costs"].values()))
