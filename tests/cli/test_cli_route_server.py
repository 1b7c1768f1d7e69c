"""``agentladder route --server``: the running server's ``POST /route``, which weighs its
health, shown as the store's routing is; mistakes in one line."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from typer.testing import CliRunner

from agentladder.cli import app
from tests.served import free_port, start_server

runner = CliRunner()

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 6.0}
  - name: sim_b
    backend: {kind: simulated, quality: 9.0}
"""


def test_route_asks_the_server_and_says_what_it_cannot_do(tmp_path: Path) -> None:
    """With --server the answer is the server's POST /route (the same agents and seed as
    asking it directly), without the note that health is unseen; --db beside --server,
    too few agents and an unreachable server are each one line and exit 1."""
    server = start_server(tmp_path, CONFIG)
    try:
        for agent, score in (("sim_a", 4.0), ("sim_b", 9.0)):
            judged = httpx.post(
                server.url("/oracle/judgments"),
                json={"agent_id": agent, "contract_id": f"c-{agent}", "score": score,
                      "task_type": "code"},
                timeout=10,
            )  # fmt: skip
            assert judged.status_code == 200, judged.text
        direct = httpx.post(
            server.url("/route"), json={"task_type": "code", "count": 2, "seed": 3}, timeout=10
        ).json()
        asked = ["route", "--task-type", "code", "--count", "2", "--seed", "3",
                 "--server", server.url("")]  # fmt: skip
        result = runner.invoke(app, [*asked, "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert [p["agent_id"] for p in out["agents"]] == [p["agent_id"] for p in direct["agents"]]
        assert out["agents"][0]["agent_id"] == "sim_b"
        assert out["seed"] == 3
        assert result.stderr == ""
        table = runner.invoke(app, asked)
        assert table.exit_code == 0, table.output
        assert "sim_b" in table.stdout
        assert "lower bound" in table.stdout
        mixed = runner.invoke(app, [*asked, "--db", str(tmp_path / "x.db")])
        assert mixed.exit_code == 1
        assert mixed.output.strip().splitlines() == [
            "error: --db: route --server asks the server, which reads its own store"
            f" ({str(tmp_path / 'x.db')!r})"
        ]
        too_many = runner.invoke(app, [*asked[:4], "3", *asked[5:]])
        assert too_many.exit_code == 1
        assert too_many.output.strip().splitlines() == [
            "error: the routing needs at least 3 qualified agents, 2 qualify"
        ]
    finally:
        server.stop()
    nobody = f"http://127.0.0.1:{free_port()}"
    gone = runner.invoke(app, ["route", "--task-type", "code", "--server", nobody])
    assert gone.exit_code == 1
    lines = gone.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0] == (
        f"error: --server {nobody}: no_answer: could not connect to {nobody} (connection"
        " refused): is `agentladder serve` running there?"
    )
