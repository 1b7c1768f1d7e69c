"""`.ci/chromium`, which `make unit` runs: chromium found, installed as root, or one line."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / ".ci" / "chromium"
BASH = "/bin/bash"


def _fake(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!{BASH}\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _run(path: Path, uid: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(path), "AGENTLADDER_FAKE_UID": uid, "HOME": os.environ.get("HOME", "/")}
    return subprocess.run(
        [BASH, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_not_root_without_chromium_names_the_command(tmp_path: Path) -> None:
    """A non-root user without chromium gets one line naming the command, and exit 1."""
    result = _run(tmp_path, uid="1000")
    assert result.returncode == 1
    assert result.stderr == "chromium is not installed; run: sudo apt-get install chromium\n"
    assert result.stdout == ""


def test_root_without_chromium_installs_it(tmp_path: Path) -> None:
    """As root without chromium the script runs apt-get update and install -y chromium."""
    log = tmp_path / "apt.log"
    _fake(tmp_path, "apt-get", f'echo "$DEBIAN_FRONTEND $*" >> {log}')
    result = _run(tmp_path, uid="0")
    assert result.returncode == 0, result.stderr
    assert log.read_text(encoding="utf-8").splitlines() == [
        "noninteractive update -qq",
        "noninteractive install -y -qq chromium",
    ]


def test_chromium_on_path_needs_nothing(tmp_path: Path) -> None:
    """With chromium on PATH the script installs nothing, even as root."""
    log = tmp_path / "apt.log"
    _fake(tmp_path, "apt-get", f'echo "$*" >> {log}')
    _fake(tmp_path, "chromium", "exit 0")
    result = _run(tmp_path, uid="0")
    assert result.returncode == 0
    assert not log.exists()
    assert result.stderr == ""


def test_make_unit_runs_the_script() -> None:
    """The Makefile's unit target (and so `make test`) runs .ci/chromium before pytest."""
    makefile = (SCRIPT.parent.parent / "Makefile").read_text(encoding="utf-8")
    unit = makefile.split("\nunit:", 1)[1].split("\n\n", 1)[0]
    assert unit.index(".ci/chromium") < unit.index("pytest")
