"""The baseline of the HTTP benchmark: a bare FastAPI app doing the same SQLite work.

``POST /oracle/judgments``: one transaction, one upsert and one insert (plain sqlite3, WAL,
the same synchronous setting). ``GET /agents``: every row of a 1,000-agent table, each
row the JSON object agentladder answers for that agent, joined into the same body (the
least any service can do to answer those bytes). The database path comes from ``BARE_DB``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any

from fastapi import FastAPI, Response

app = FastAPI()
_local = threading.local()


def _conn() -> sqlite3.Connection:
    conn: sqlite3.Connection | None = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(os.environ["BARE_DB"], isolation_level=None, timeout=60)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {os.environ.get('BARE_SYNC', 'FULL')}")
        _local.conn = conn
    return conn


@app.post("/oracle/judgments")
def judge(body: dict[str, Any]) -> dict[str, Any]:
    """Upsert the agent's XP and append one ledger line, in one transaction."""
    conn = _conn()
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO p (id, xp) VALUES (?, 35) ON CONFLICT (id) DO UPDATE SET xp = xp + 35",
        (body["agent_id"],),
    )
    conn.execute(
        "INSERT INTO h (agent_id, contract_id, xp) VALUES (?, ?, 35)",
        (body["agent_id"], body["contract_id"]),
    )
    conn.execute("COMMIT")
    return {"agent_id": body["agent_id"], "xp_awarded": 35}


@app.get("/agents")
def agents() -> Response:
    """Every registered agent."""
    rows = _conn().execute("SELECT doc FROM agents ORDER BY name").fetchall()
    body = '{"agents":[' + ",".join(doc for (doc,) in rows) + "]}"
    return Response(body, media_type="application/json")
