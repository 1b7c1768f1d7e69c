"""`agentladder serve` on SQLite, SIGKILLed twice under concurrent load and restarted.

Every request answered 2xx before a kill is found afterwards (sent again, it comes back
as a duplicate); every request sent again with the same id is counted once; deliberation
results acknowledged but not yet ranked when the service died are ranked after the
restart; replaying the ledger gives the stored profiles.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from agentladder.store.url import open_store
from tests.faults.check import check_store
from tests.faults.load import Load
from tests.served import Server, free_port, start_server

AGENTS = [f"sim_{letter}" for letter in "abcdef"]
CONFIG = "orchestrator: {recover_interval_s: 0.5}\nagents:\n" + "".join(
    f"  - name: {a}\n    backend: {{kind: simulated}}\n" for a in AGENTS
)
WORKERS = 8
KILLS = 2
ACKED_BEFORE_KILL = 150


def _settled(server: Server, identifiers: set[str], timeout: float = 60.0) -> None:
    """Wait until every deliberation's ranking and judgments are applied."""
    pending = set(identifiers)
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=server.base, timeout=10) as client:
        while pending:
            assert time.monotonic() < deadline, f"{len(pending)} never settled"
            for identifier in list(pending):
                record = client.get(f"/deliberation/{identifier}").json()
                if record["ranking"]["state"] == record["judgments"]["state"] == "applied":
                    pending.discard(identifier)
            time.sleep(0.1)


@pytest.mark.faults
def test_sigkill_under_load_loses_nothing_acknowledged(tmp_path: Path) -> None:
    port = free_port()
    load = Load(AGENTS)
    server = start_server(tmp_path, CONFIG, port=port)
    kills = []
    logs = [server]
    try:
        for _ in range(KILLS):
            stop, threads = load.start(WORKERS, [server.base])
            try:
                load.wait_acked(ACKED_BEFORE_KILL)
                acked_at_kill = len(load.acked)
                server.kill()  # mid-load: requests are in flight
                time.sleep(0.3)  # the clients see refused connections meanwhile
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=30)
            kills.append((acked_at_kill, len(load.sent)))
            server = start_server(tmp_path, CONFIG, port=port)
            logs.append(server)
        outcome = load.retry_all([server.base])
        assert outcome["kept"] >= KILLS * ACKED_BEFORE_KILL
        expected = load.expected()
        _settled(server, expected.deliberations)
        # a retried request is not counted twice: sending everything once more changes nothing
        again = load.retry_all([server.base])
        assert again == {"kept": len(load.sent)}
    finally:
        server.stop()

    async def verify() -> dict[str, int]:
        store = await open_store(f"sqlite:///{tmp_path / 'served.db'}")
        try:
            return await check_store(store, expected)
        finally:
            await store.close()

    figures = asyncio.run(verify())
    assert figures["events"] > KILLS * ACKED_BEFORE_KILL
    refused = sum(n for s, n in load.statuses.items() if not s.isdigit())
    assert refused > 0, "the kills happened while no request was in flight"
    assert not [s for s in load.statuses if s.isdigit() and int(s) >= 300], load.statuses
    resumed = sum(
        int(line.split("side effects of ")[1].split()[0])
        for served in logs
        for line in served.output().splitlines()
        if "recovery: resumed" in line
    )
    print(
        f"kills (acked, sent): {kills}; retries: {dict(outcome)}; statuses: "
        f"{dict(load.statuses)}; checked: {figures}; resumed: {resumed}"
    )
