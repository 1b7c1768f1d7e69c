"""Which store a data command opens: ``--store URL`` or ``--db FILE`` (short for
``--store sqlite:///FILE``), else the configuration's; and that it exists.

A data command reads or writes a store that is there: pointed at one that does not exist
(a SQLite file that is not there, a NATS server without agentladder's Oracle stream) it
says so in one line (``InvalidInput("store")``, exit 1) instead of creating an empty one.
``serve`` and ``demo`` create their store; so do ``judge --create`` and
``deliberate --create``. ``memory://`` always exists (and is gone when the command ends).

A SQLite file that is missing while the marker beside it says a store was there (it was
deleted or moved: ``store/sqlite/identity.py``) is never replaced by an empty one unless
``--create`` says so (``forget_vanished_store``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer

from agentladder.cli.demofile import demo_hint
from agentladder.errors import InvalidInput, StoreUnavailable
from agentladder.store.sqlite.identity import forget_vanished
from agentladder.store.url import sqlite_path

__all__ = ["CreateOpt", "DbOpt", "check_exists", "forget_vanished_store", "store_url"]

DbOpt = Annotated[
    Path | None, typer.Option("--db", help="A SQLite file: short for --store sqlite:///FILE.")
]
CreateOpt = Annotated[
    bool,
    typer.Option(
        "--create",
        help="Create the store if it does not exist yet, also where the marker of a"
        " vanished SQLite file says one was.",
    ),
]


def store_url(store: str | None, db: Path | None) -> str | None:
    """The URL ``--store`` or ``--db`` names (``None``: the configuration's)."""
    if db is None:
        return store
    if store is not None:
        raise InvalidInput("--db", str(db), "names the store a second time (--store): give one")
    return f"sqlite:///{db}"


def forget_vanished_store(url: str) -> None:
    """``--create``: a SQLite file that is missing may be created anew even where its
    marker says a store was there (the marker and stale companions are removed)."""
    if urlsplit(url).scheme == "sqlite":
        forget_vanished(sqlite_path(url))


def check_exists(url: str) -> None:
    """``InvalidInput("store", url)`` in one line when the store ``url`` names does not
    exist yet (see the module docstring); a URL no store opens is left to ``open_store``."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        path = sqlite_path(url)
        if not Path(path).is_file():
            raise InvalidInput("store", url, f"no such SQLite file {path}: check the path"
                               " (serve, demo, and judge or deliberate with --create create a"
                               f" store){demo_hint(Path(path))}")  # fmt: skip
    elif scheme in ("nats", "tls"):
        asyncio.run(_check_nats(url))


async def _check_nats(url: str) -> None:
    import nats.errors  # noqa: PLC0415 (only a NATS store needs it)
    import nats.js.errors  # noqa: PLC0415

    from agentladder.store.nats.config import parse_nats_url  # noqa: PLC0415
    from agentladder.store.nats.io import connect  # noqa: PLC0415

    options = parse_nats_url(url)
    nc = await connect(options)
    try:
        await nc.jetstream(timeout=5.0).stream_info(options.oracle_stream)
    except nats.js.errors.NotFoundError:
        raise InvalidInput("store", url, f"no agentladder store on this NATS server (no"
                           f" stream {options.oracle_stream}): check the URL and its prefix"
                           " (serve, and judge or deliberate with --create create a store)"
                           ) from None  # fmt: skip
    except (nats.errors.Error, TimeoutError) as error:
        raise StoreUnavailable(f"the NATS server at {url} does not answer for JetStream"
                               f" ({type(error).__name__}): is it started with -js?"
                               ) from error  # fmt: skip
    finally:
        await nc.close()
