"""The demo's file for the data commands: found when nothing names a store, named in the
error when a store is missing, and opened with the demo's agents.

``make demo`` (``agentladder demo``) writes ``agentladder-demo.db`` in the working folder,
while the data commands' default store is ``agentladder.db``. So:

- a data command given no ``--config``, ``--store`` or ``--db`` whose default file does
  not exist reads the demo's file when it is here, and says so in one line on stderr
  (``demo_fallback``);
- a missing SQLite store's error names ``--db agentladder-demo.db`` (``demo_hint``);
- a store the demo wrote, opened without ``--config``, is opened with the demo's
  configuration (its eight simulated agents, in process, as ``serve --demo`` does), so that
  ``deliberate --db agentladder-demo.db`` reaches them (``demo_settings_for``). The demo's
  store is told by its registrations: exactly the demo's agents, with their providers and
  models.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

import typer

from agentladder.config import Settings
from agentladder.demo import DEMO_DB, agents, demo_settings
from agentladder.store.url import open_store, sqlite_path

__all__ = ["demo_fallback", "demo_hint", "demo_settings_for"]


def _sqlite_file(url: str) -> Path | None:
    return Path(sqlite_path(url)) if urlsplit(url).scheme == "sqlite" else None


def demo_hint(missing: Path) -> str:
    """What the error of a missing SQLite file adds about the demo's file."""
    if DEMO_DB.is_file() and missing.resolve() != DEMO_DB.resolve():
        return f"; the demo's store is here: give --db {DEMO_DB}"
    return f"; `make demo` (or `agentladder demo`) writes one to explore: then --db {DEMO_DB}"


def demo_fallback(url: str) -> str:
    """The store to open when nothing named one: ``url`` (the default), or the demo's file
    when the default SQLite file does not exist and the demo's does (said on stderr)."""
    path = _sqlite_file(url)
    if path is None or path.is_file() or not DEMO_DB.is_file():
        return url
    typer.echo(
        f"note: no store named and {path} does not exist: reading the demo's {DEMO_DB}"
        " (--db FILE or --config names another)",
        err=True,
    )
    return f"sqlite:///{DEMO_DB}"


async def _registered(url: str) -> set[tuple[str, str, str]]:
    store = await open_store(url)
    try:
        return {
            (r.config.name, r.config.provider_id, r.config.model_name)
            for r in await store.list_registrations()
        }
    finally:
        await store.close()


def demo_settings_for(url: str) -> Settings | None:
    """The demo's configuration on ``url`` when it is a SQLite file the demo wrote (its
    registrations are exactly the demo's agents), else None."""
    path = _sqlite_file(url)
    if path is None or not path.is_file():
        return None
    expected = {(a.name, a.provider_id, a.model_name) for a in agents()}
    if asyncio.run(_registered(url)) != expected:
        return None
    return demo_settings(path)
