"""`agentladder import` run as the program hands its last step, the skill fit, to a fresh
image of itself (`cli/handoff.py`): the same summary, exit status and stored state as the
import that fits in its own process, the summary's file removed; when the new image
cannot start, the fit runs in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentladder.cli import app, handoff
from agentladder.domain.skill.rules import SkillRules
from agentladder.importing import last_step
from agentladder.importing.last_step import hand_over
from agentladder.importing.run import Summary
from tests.importing.helpers import run_with_services
from tests.importing.test_import_jsonl import GOOD, _snapshot, _write

runner = CliRunner()

# The program, with an audit hook that names every image it starts (os.execv's audit event).
_PROGRAM = """
import sys
sys.addaudithook(
    lambda event, args: event == "os.exec" and print("EXEC", *args[1], file=sys.stderr)
)
sys.argv = ["agentladder", *sys.argv[1:]]
from agentladder.cli import main
main()
"""

LINES = [*GOOD, {"agent_id": "a/b", "contract_id": "x"}]


def _run(*args: str, temporary: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The program with ``args``; its temporary files in ``temporary`` when given."""
    env = {**os.environ, **({"TMPDIR": str(temporary)} if temporary else {})}
    return subprocess.run(
        [sys.executable, "-c", _PROGRAM, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def _temporary(tmp_path: Path) -> Path:
    """A temporary folder of this test's own: the imports' summary files are looked for
    there, where no other test (another pytest worker's included) writes one."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def _leftover_summaries(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("agentladder-import-*.json")}


@pytest.mark.parametrize("as_json", [True, False])
def test_the_program_fits_in_a_fresh_image_with_the_same_result(
    tmp_path: Path, as_json: bool
) -> None:
    """One new image (`importing/last_step.py`), whose report is the import's (the refused
    line named, exit 1) and whose store equals the in-process import's: profiles, ledgers
    and fitted skill states; `oracle verify` passes; no summary file is left behind."""
    path = _write(tmp_path / "h.jsonl", LINES)
    temporary = _temporary(tmp_path)
    db = tmp_path / "program.db"
    done = _run(
        "import", str(path), "--db", str(db), *(["--json"] if as_json else []),
        temporary=temporary,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    images = [line.split()[1:] for line in done.stderr.splitlines() if line.startswith("EXEC")]
    assert len(images) == 1, done.stderr
    assert images[0][1:3] == ["-m", "agentladder.importing.last_step"]
    if as_json:
        summary = json.loads(done.stdout)
        counts = [summary[k] for k in ("imported", "duplicate", "conflicting", "refused")]
        assert counts == [3, 0, 0, 1]
        assert summary["new_agents"] == ["a1", "a2"]
        assert summary["problems"][0]["where"] == f"{path}:4"
    else:
        assert "imported 3, duplicate 0, conflicting 0, refused 1 in" in done.stdout
        assert "new agents (2): a1, a2" in done.stdout
        assert f"{path}:4: refused: agent_id: " in done.stderr
        assert "fitting the skill model to the whole log" in done.stderr
    assert _leftover_summaries(temporary) == set()

    in_place = tmp_path / "in-place.db"
    assert runner.invoke(app, ["import", str(path), "--db", str(in_place)]).exit_code == 1
    got = run_with_services(f"sqlite:///{db}", _snapshot)
    assert got == run_with_services(f"sqlite:///{in_place}", _snapshot)
    assert got[2]  # fitted states
    assert all(types for _, types in got[2])
    verified = runner.invoke(app, ["oracle", "verify", "--db", str(db), "--json"])
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["skill_differences"] == []


def test_fleet_fit_covers_the_log_after_the_handoff(tmp_path: Path, store_url: str) -> None:
    """On SQLite and NATS the new image's fit read the whole log: the fleet's fit is at its
    last seq; an import into memory (which no other process sees) fits in place."""
    path = _write(tmp_path / "h.jsonl", GOOD)
    done = _run("import", str(path), "--store", store_url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"] == 3
    if store_url.startswith("memory"):  # gone with the process: the fit stays in it
        assert "EXEC" not in done.stderr
        return
    assert "EXEC" in done.stderr

    async def marks(services: Any) -> tuple[int | None, int]:
        fleet = await services.store.get_fleet_skill()
        events = await services.store.skill_events(after=0, limit=1000)
        return (fleet.fit.seq if fleet.fit else None), events[-1].seq

    fitted, last = run_with_services(store_url, marks)
    assert fitted == last


def test_a_new_image_that_cannot_start_leaves_the_fit_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`execv` failing (OSError): the same process fits and reports; no file is left."""
    calls: list[list[str]] = []

    def refused(executable: str, argv: list[str]) -> None:
        calls.append(argv)
        raise OSError(8, "Exec format error")

    monkeypatch.setattr(handoff, "_program", True)
    monkeypatch.setattr(os, "execv", refused)
    path = _write(tmp_path / "h.jsonl", GOOD)
    temporary = _temporary(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    db = tmp_path / "x.db"
    result = runner.invoke(app, ["import", str(path), "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    assert len(calls) == 1
    assert json.loads(result.stdout)["imported"] == 3
    assert _leftover_summaries(temporary) == set()
    in_place = tmp_path / "in-place.db"
    monkeypatch.setattr(handoff, "_program", False)
    assert runner.invoke(app, ["import", str(path), "--db", str(in_place)]).exit_code == 0
    assert run_with_services(f"sqlite:///{db}", _snapshot) == run_with_services(
        f"sqlite:///{in_place}", _snapshot
    )


def test_the_last_step_fails_on_one_line_and_removes_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store the new image cannot open: one line naming it, exit 1, the file gone."""
    handed = tmp_path / "handed.json"
    handed.write_text(hand_over(Summary(imported=3), "bogus://nowhere", SkillRules()))
    assert last_step.main([str(handed), "--json"]) == 1
    line = capsys.readouterr().err.strip()
    assert line.startswith("error: ")
    assert "bogus://nowhere" in line
    assert "\n" not in line
    assert not handed.exists()
