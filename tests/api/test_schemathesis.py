"""schemathesis against a real `agentladder serve`: no 5xx, no response outside the schema."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.api.test_serve import CONFIG, free_port, serve, stop


def test_schemathesis_finds_no_server_error_and_no_schema_break(tmp_path: Path) -> None:
    """Coverage, fuzzing and stateful phases over every operation, a fixed seed, bounded."""
    config = tmp_path / "agents.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    port = free_port()
    process = serve(config, tmp_path / "st.db", port)
    try:
        result = subprocess.run(
            [
                str(Path(sys.executable).with_name("st")), "run",
                f"http://127.0.0.1:{port}/openapi.json",
                "--checks", "not_a_server_error,response_schema_conformance",
                "--max-examples", "25", "--seed", "2026", "--no-color",
            ],
            check=False, capture_output=True, text=True, timeout=300, env=dict(os.environ),
            cwd=tmp_path,
        )  # fmt: skip
    finally:
        stop(process)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "generated" in result.stdout
