"""`agentladder serve` start-up failures as real processes: each one line naming the path,
URL or port and the fix, with its documented exit code, the traceback only with --debug,
and the port checked before the store is opened."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentladder.natsserver import find_binary
from tests.served import free_port


def _serve(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "agentladder.cli", "serve", *args],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def _one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


@pytest.fixture
def locked() -> Iterator[list[Path]]:
    """Paths made unwritable for this user by ``_lock``, writable again after the test."""
    paths: list[Path] = []
    try:
        yield paths
    finally:
        for path in paths:
            if os.geteuid() == 0:
                subprocess.run(["chattr", "-i", str(path)], check=True)
            path.chmod(0o755)


def _lock(path: Path, locked: list[Path]) -> None:
    """Make ``path`` unwritable: immutable when root (who may write anything else), else
    without its write bits."""
    locked.append(path)
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        path.chmod(0o555 if path.is_dir() else 0o444)


def test_a_read_only_file_is_named_with_the_fix(tmp_path: Path, locked: list[Path]) -> None:
    """A SQLite file that may not be written: exit 3, one line naming it."""
    db = tmp_path / "ro.db"
    db.write_bytes(b"")
    _lock(db, locked)
    code, output = _serve("--db", str(db), "--port", str(free_port()))
    assert code == 3, output
    line = _one_line(output)
    assert str(db) in line
    assert "read-only" in line


def test_an_unwritable_directory_is_named_with_the_fix(tmp_path: Path, locked: list[Path]) -> None:
    """A new SQLite file in a directory that may not be written: exit 3, one line naming
    the directory; nothing created."""
    folder = tmp_path / "closed"
    folder.mkdir()
    _lock(folder, locked)
    code, output = _serve("--db", str(folder / "new.db"), "--port", str(free_port()))
    assert code == 3, output
    line = _one_line(output)
    assert str(folder) in line
    assert "not writable" in line
    assert not (folder / "new.db").exists()


def test_a_bad_store_url_is_refused_before_the_banner(tmp_path: Path) -> None:
    """``--store postgres://x``: exit 1, one line naming the URL, no listening banner."""
    code, output = _serve("--store", "postgres://x", "--port", str(free_port()))
    assert code == 1, output
    line = _one_line(output)
    assert "postgres://x" in line
    assert "http://" not in output


def test_a_port_in_use_is_found_before_the_store_is_opened(tmp_path: Path) -> None:
    """The port held by another socket: exit 4, one line naming it, the SQLite file not
    created; with --debug the traceback too."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        db = tmp_path / "never.db"
        code, output = _serve("--db", str(db), "--port", str(port))
        assert code == 4, output
        line = _one_line(output)
        assert f"port {port}" in line
        assert "--port" in line
        assert not db.exists()
        code, output = _serve("--db", str(db), "--port", str(port), "--debug")
        assert code == 4, output
        assert "Traceback" in output


def test_a_nats_server_without_jetstream_is_named_with_the_fix(tmp_path: Path) -> None:
    """nats-server started without -js: exit 3, one line naming the URL and -js."""
    port = free_port()
    nats = subprocess.Popen(
        [str(find_binary()), "-a", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"nats://127.0.0.1:{port}"
        code, output = _serve("--store", url, "--port", str(free_port()))
    finally:
        nats.terminate()
        nats.wait(timeout=10)
    assert code == 3, output
    line = _one_line(output)
    assert url in line
    assert "-js" in line


def test_a_good_start_still_serves(tmp_path: Path) -> None:
    """The checks pass a writable new file: serve answers /readyz (checked by the helper)."""
    from tests.served import start_server

    server = start_server(tmp_path, "")
    try:
        assert httpx.get(server.url("/readyz"), timeout=10).status_code == 200
    finally:
        server.stop()
