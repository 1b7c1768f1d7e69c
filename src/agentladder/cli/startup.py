"""What ``agentladder serve`` checks before it starts, each a small function raising one
of agentladder's own exceptions with a one-line message naming the path, URL or port and
the fix; ``serve`` prints that line and exits with ``exit_code(error)`` (the traceback only
with ``--debug``). In this order, so nothing is opened for a start that cannot succeed:
the tokens (``check_api``), the store URL (``check_store_url``), the address
(``listen``: the port is bound before the store is opened), the store itself
(``check_store``: a SQLite file readable, writable and not damaged, and not missing where
its marker says a store was, ``store/sqlite/identity.py``; a NATS server with JetStream).

Exit codes: 1 the configuration, a token or the store URL is invalid; 2 the command
line is (Typer's); 3 the store cannot be used; 4 the address cannot be listened on.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from agentladder.api.auth import TokenBook
from agentladder.config import Settings
from agentladder.errors import AddressInUse, AgentladderError, InvalidInput, StoreError
from agentladder.store.sqlite.health import damage, quick_check
from agentladder.store.sqlite.identity import vanished
from agentladder.store.url import sqlite_path

__all__ = [
    "EXIT_ADDRESS",
    "EXIT_CONFIG",
    "EXIT_STORE",
    "check_api",
    "check_sqlite_file",
    "check_store",
    "check_store_url",
    "exit_code",
    "listen",
]

log = logging.getLogger(__name__)

EXIT_CONFIG = 1
EXIT_STORE = 3
EXIT_ADDRESS = 4
INTEGRITY_BUDGET_S = 10.0
"""The longest the start-up integrity check of a SQLite file runs (a larger file is
checked for that long, then served with a warning that the check did not finish)."""


def exit_code(error: AgentladderError) -> int:
    """The documented exit code of a start-up failure."""
    if isinstance(error, AddressInUse):
        return EXIT_ADDRESS
    if isinstance(error, StoreError):
        return EXIT_STORE
    return EXIT_CONFIG


def check_api(settings: Settings) -> None:
    """The tokens resolve (each at least 16 characters) and proxies are trusted only with
    tokens (``TokenBook``)."""
    TokenBook(settings.api)


def check_store_url(url: str) -> None:
    """``InvalidInput("store")`` for a URL no store opens (its scheme or its options)."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        sqlite_path(url)
    elif scheme in ("nats", "tls"):
        from agentladder.store.nats.config import parse_nats_url  # noqa: PLC0415

        parse_nats_url(url)
    elif scheme != "memory":
        raise InvalidInput("store", url, "must start with memory://, sqlite:/// or nats://")


def listen(host: str, port: int) -> socket.socket:
    """A socket bound and listening on ``host:port`` (handed to the server, so the port is
    held from now on); ``AddressInUse`` if it is taken or not this machine's."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise AddressInUse(
                f"port {port} on {host} is in use (another agentladder serve?): stop that"
                " process, or choose another port with --port"
            ) from error
        raise AddressInUse(
            f"cannot listen on {host}:{port} ({error.strerror}): give an address of this"
            " machine with --host, and a port above 1023 unless running as root"
        ) from error
    sock.set_inheritable(True)
    return sock


def check_sqlite_file(path: Path, budget_s: float = INTEGRITY_BUDGET_S) -> None:
    """The file can be read and written, its directory too (SQLite creates ``-wal`` and
    ``-shm`` beside it), and a ``quick_check`` of at most ``budget_s`` finds no damage;
    a missing file is created only where no marker says a store was there; ``StoreError``
    naming the path and the fix otherwise."""
    gone = vanished(path)
    if gone is not None:
        raise gone
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(f"the directory {folder} of the SQLite file {path} does not exist:"
                         " create it, or give another path")  # fmt: skip
    if path.exists():
        if not os.access(path, os.R_OK | os.W_OK):
            raise StoreError(
                f"the SQLite file {path} is read-only for this user: make it writable"
                f" (chmod u+w {path}, or chown it), or serve a copy"
            )
        companions = [path.with_name(path.name + end) for end in ("-wal", "-shm")]
        present = all(p.exists() and os.access(p, os.R_OK | os.W_OK) for p in companions)
        if not present and not os.access(folder, os.W_OK | os.X_OK):
            raise StoreError(f"the directory {folder} is not writable for this user, and SQLite"
                             f" creates {path.name}-wal and {path.name}-shm in it: make it"
                             " writable, or move the file")  # fmt: skip
        if path.stat().st_size and budget_s > 0:
            problem, finished = quick_check(path, budget_s)
            if problem is not None:
                raise damage(str(path), problem)
            if not finished:
                log.warning("the integrity check of %s did not finish within %.0f s: served"
                            " without it (check it with `sqlite3 %s 'PRAGMA quick_check'`)",
                            path, budget_s, path)  # fmt: skip
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"the directory {folder} is not writable for this user, so the"
                         f" SQLite file {path} cannot be created: make it writable, or give"
                         " another path")  # fmt: skip


async def _check_nats(url: str) -> None:
    import nats.errors  # noqa: PLC0415 (only a NATS store needs it)

    from agentladder.store.nats.config import parse_nats_url  # noqa: PLC0415
    from agentladder.store.nats.io import connect  # noqa: PLC0415

    nc = await connect(parse_nats_url(url))
    try:
        await nc.jetstream(timeout=5.0).account_info()
    except (nats.errors.Error, TimeoutError) as error:
        raise StoreError(f"the NATS server at {url} has no JetStream ({type(error).__name__}):"
                         " start nats-server with -js (or jetstream {} in its configuration)"
                         ) from error  # fmt: skip
    finally:
        await nc.close()


def check_store(url: str, budget_s: float = INTEGRITY_BUDGET_S) -> None:
    """The store ``url`` names can be used: ``check_sqlite_file`` for SQLite; a NATS
    server that answers, with JetStream. ``StoreError`` otherwise."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        check_sqlite_file(Path(sqlite_path(url)), budget_s)
    elif scheme in ("nats", "tls"):
        asyncio.run(_check_nats(url))
