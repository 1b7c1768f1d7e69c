"""The gateway's pending checks in SQLite (table ``gateway_checks`` of migration 10): one
row per contract id, the record's JSON and a revision that every replacement names
(``store/checks.py``). A create or compare-and-set is one write of the writer, under its
lock: two processes on the file cannot both win.
"""

from __future__ import annotations

import sqlite3

from agentladder.errors import RevisionConflict
from agentladder.store.checks import PendingCheck
from agentladder.store.codec import decode
from agentladder.store.records import Versioned
from agentladder.store.sqlite.connections import SqliteFile

__all__ = ["SqliteChecks"]


class SqliteChecks(SqliteFile):
    """``CheckStore`` on the file."""

    async def put_check(self, check: PendingCheck, revision: int) -> int:
        """Create (revision 0) or replace at ``revision``; the new revision."""
        contract, doc = check.contract_id, check.model_dump_json()

        def run(conn: sqlite3.Connection) -> int:
            found = conn.execute(
                "SELECT revision FROM gateway_checks WHERE contract_id = ?", (contract,)
            ).fetchone()
            stored = 0 if found is None else int(found[0])
            if stored != revision:
                raise RevisionConflict(f"gateway_checks/{contract}", revision, stored)
            conn.execute(
                "INSERT INTO gateway_checks (contract_id, at, revision, doc) VALUES (?,?,?,?)"
                " ON CONFLICT (contract_id) DO UPDATE SET revision = excluded.revision,"
                " doc = excluded.doc",
                (contract, check.at, stored + 1, doc),
            )
            return stored + 1

        return await self._write(run)

    async def list_checks(self, limit: int) -> list[Versioned[PendingCheck]]:
        """The earliest answered first."""

        def run(conn: sqlite3.Connection) -> list[Versioned[PendingCheck]]:
            rows = conn.execute(
                "SELECT contract_id, revision, doc FROM gateway_checks"
                " ORDER BY at, contract_id LIMIT ?",
                (limit,),
            )
            return [
                Versioned(decode(PendingCheck, doc, f"gateway_checks/{contract}"), revision)
                for contract, revision, doc in rows
            ]

        return await self._read(run)

    async def delete_check(self, contract_id: str) -> None:
        """Delete its row."""
        await self._write(
            lambda c: c.execute("DELETE FROM gateway_checks WHERE contract_id = ?", (contract_id,))
        )
