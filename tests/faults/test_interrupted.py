"""Ctrl-C during a deliberation: a real SIGINT to a real `agentladder serve` while one agent
has answered and the other (slow but correct, on a local OpenAI-compatible server) is still
thinking. serve says how many deliberations it interrupted; after a restart the record
says "interrupted" with the real cause and round, keeps the cost of the call that was made
and paid, its calls are counted in the stats, and its ranking and judgments are settled
(applied for the calls, abandoned for the judgments, with the reason), never pending."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx

from tests.faults.broken_server import BrokenServer
from tests.served import _reap, start_server


def config(server: BrokenServer) -> str:
    """quick answers at once, slowpoke in 20 s (its call's timeout is 60 s)."""
    agents = "".join(
        f"""
  - name: {name}
    input_price_per_mtok: 1000.0
    output_price_per_mtok: 2000.0
    backend: {{kind: openai, base_url: "{server.url}", model: "{model}", max_tokens: 32}}"""
        for name, model in (("quick", "good:8"), ("slowpoke", "slow:20000"))
    )
    return f"""
orchestrator: {{timeout_s: 60}}
agents:{agents}
"""


def test_ctrl_c_interrupts_the_deliberation_and_the_restart_finds_it_settled(
    tmp_path: Path,
) -> None:
    """SIGINT while round 1 waits on slowpoke: serve stops cleanly saying it interrupted
    1 deliberation; after the restart the record is failed, "interrupted: the service was
    stopped (SIGINT), in round 1", its cost is quick's answered call (20 input and 8
    output tokens at its prices), quick's call is in its stats, the ranking is applied
    (nobody promoted, why given) and the judgments abandoned with the reason."""
    with BrokenServer() as broken:
        served = start_server(tmp_path, config(broken), db="ctrl-c.db")
        try:
            identifier = served.deliberate(["quick", "slowpoke"])
            deadline = time.monotonic() + 20
            while broken.stats()["requests"].get("good", 0) < 1:  # quick has answered
                assert time.monotonic() < deadline, served.output()[-2000:]
                time.sleep(0.02)
            while broken.stats()["requests"].get("slow", 0) < 1:  # slowpoke is thinking
                assert time.monotonic() < deadline, served.output()[-2000:]
                time.sleep(0.02)
            time.sleep(0.2)  # quick's answer read and priced
        finally:
            os.kill(served.process.pid, signal.SIGINT)
            code = _reap(served.process, served.log)
        output = served.output()
        assert code in (0, 130), output[-3000:]  # 130: a clean stop by SIGINT (docs/cli.md)
        assert "the service was stopped (SIGINT): interrupted 1 deliberation in flight" in output, (
            output[-3000:]
        )
        again = start_server(tmp_path, config(broken), db="ctrl-c.db")
        try:
            record = httpx.get(again.url(f"/deliberation/{identifier}"), timeout=10).json()
            stats = httpx.get(again.url("/agents/quick"), timeout=10).json()["stats"]
            page = httpx.get(again.url(f"/dashboard/deliberations/{identifier}"), timeout=10)
        finally:
            again.stop()
    assert record["status"] == "failed"
    assert record["error"] == "interrupted: the service was stopped (SIGINT), in round 1"
    paid = (20 * 1000.0 + 8 * 2000.0) / 1_000_000
    assert record["total_cost"] == paid
    assert record["agent_costs"] == {"quick": paid}
    assert record["ranking"]["state"] == "applied"
    assert record["ranking"]["promoted"] == []
    assert record["ranking"]["explanation"].startswith("nobody promoted: interrupted:")
    assert record["judgments"]["state"] == "abandoned"
    assert "did not complete" in record["judgments"]["error"]
    assert record["skill"]["state"] == "abandoned"
    assert (stats["tasks_completed"], stats["deliberations_completed"]) == (1, 0)
    assert "$0.0360" in page.text
    assert 'id="judgments-state">abandoned' in page.text
