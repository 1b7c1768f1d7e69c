"""The SQLite store's deliberation documents: encoded fast, every JSON value kept exactly."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

from agentladder.store.records import DeliberationDoc
from agentladder.store.sqlite.store import SqliteStore

BODY = {
    "query": "Prüfung ✓ 日本",
    "scores": {"a": 7.123456789012345, "b": None, "c": 1e-07, "d": 10.0},
    "flags": [True, False, 0, -3],
    "nested": [{"x": [1.5, "two", None]}],
}


def test_documents_round_trip_and_stay_ascii(tmp_path: Path) -> None:
    """Floats, nulls, non-ASCII text and nesting come back equal; the stored text is the
    JSON of the body, ASCII only (non-ASCII escaped, as ``json.dumps`` writes it)."""

    async def main() -> None:
        store = SqliteStore(tmp_path / "docs.db")
        try:
            await store.put_deliberation(
                DeliberationDoc(id="d1", status="completed", created_at=1.0, body=BODY)
            )
            got = await store.get_deliberation("d1")
            assert got is not None
            assert got.body == BODY
        finally:
            await store.close()
        with sqlite3.connect(tmp_path / "docs.db") as conn:
            (text,) = conn.execute("SELECT doc FROM deliberations WHERE id = 'd1'").fetchone()
        assert text.isascii()
        assert json.loads(text) == BODY

    asyncio.run(main())


def test_a_lone_surrogate_is_still_stored(tmp_path: Path) -> None:
    """A string the fast encoder refuses (a lone surrogate, which an agent's answer may
    hold) is written through ``json.dumps``, as before: the write succeeds."""

    async def main() -> None:
        store = SqliteStore(tmp_path / "docs.db")
        body = {"content": "broken \ud800 answer"}
        try:
            await store.put_deliberation(
                DeliberationDoc(id="d2", status="completed", created_at=1.0, body=body)
            )
        finally:
            await store.close()
        with sqlite3.connect(tmp_path / "docs.db") as conn:
            (text,) = conn.execute("SELECT doc FROM deliberations WHERE id = 'd2'").fetchone()
        assert text == json.dumps(body)

    asyncio.run(main())
