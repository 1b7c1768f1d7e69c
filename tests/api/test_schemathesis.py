"""schemathesis against a real `agentladder serve`: no 5xx, no response outside the schema."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.api.test_serve import CONFIG
from tests.served import start_server


def test_schemathesis_finds_no_server_error_and_no_schema_break(tmp_path: Path) -> None:
    """Coverage, fuzzing and stateful phases over every operation, a fixed seed, bounded."""
    server = start_server(tmp_path, CONFIG, db="st.db")
    try:
        result = subprocess.run(
            [
                str(Path(sys.executable).with_name("st")), "run",
                server.url("/openapi.json"),
                "--checks", "not_a_server_error,response_schema_conformance",
                "--max-examples", "25", "--seed", "2026", "--no-color",
            ],
            check=False, capture_output=True, text=True, timeout=300, env=dict(os.environ),
            cwd=tmp_path,
        )  # fmt: skip
    finally:
        server.stop()
    assert result.returncode == 0, result.stdout[-4000:]
    assert "generated" in result.stdout
