"""`make demo` leaves the work tree clean: every file it writes, and every file a SQLite
store keeps beside its own (SQLite's companions, the marker ``FILE-created``), is ignored
by the repository's .gitignore."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentladder.demo import DEMO_DB
from agentladder.store.sqlite.identity import FILE_SUFFIXES

ROOT = Path(__file__).resolve().parents[2]
GIT = shutil.which("git")


def git(folder: Path, *args: str) -> str:
    """``git ARGS`` in ``folder``; its output (it must succeed)."""
    assert GIT is not None, "git is needed to read .gitignore as git does"
    done = subprocess.run(
        [GIT, *args], cwd=folder, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A new git repository holding the project's .gitignore, committed."""
    shutil.copy(ROOT / ".gitignore", tmp_path / ".gitignore")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".gitignore")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "i")
    return tmp_path


def test_the_demo_leaves_no_untracked_file(repository: Path) -> None:
    """`agentladder demo` (make demo's command, one deliberation) in the repository: it
    writes its store and the store's marker there, and git shows nothing untracked."""
    demo = [sys.executable, "-m", "agentladder.cli", "demo", "--deliberations", "1"]
    done = subprocess.run(
        demo, cwd=repository, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    written = {p.name for p in repository.iterdir()} - {".git", ".gitignore"}
    assert {DEMO_DB.name, f"{DEMO_DB.name}-created"} <= written, written
    status = git(repository, "status", "--porcelain", "--untracked-files=all", "--ignored")
    assert [line for line in status.splitlines() if not line.startswith("!! ")] == []
    assert sorted(line[3:] for line in status.splitlines()) == sorted(written)


def test_every_file_of_a_sqlite_store_is_ignored(repository: Path) -> None:
    """The demo's store, the default store and one in a folder: the file, its -wal, -shm
    and -journal (there while it is served, or after a crash) and its marker."""
    names = [
        f"{store}{suffix}"
        for store in (DEMO_DB.name, "agentladder.db", "data/team.db")
        for suffix in FILE_SUFFIXES
    ]  # fmt: skip
    ignored = git(repository, "check-ignore", "--no-index", *names).split()
    assert sorted(ignored) == sorted(names)
