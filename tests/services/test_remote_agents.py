"""Remote agents: `agentladder agent` processes heartbeat and answer tasks over real NATS."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import nats
from agentladder.domain.deliberation import DeliberationRequest
from agentladder.domain.deliberation_record import DeliberationStatus
from agentladder.natsserver import NatsServer
from agentladder.services.agents.nats import NatsAgentProvider, heartbeat_subject, serve_heartbeats
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import SystemClock
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.oracle.service import Oracle
from agentladder.store.memory import MemoryStore

CONFIG = """
orchestrator:
  heartbeat_interval_s: 0.5
agents:
  - name: far_a
    provider_id: simulated
    remote: true
    backend: {kind: simulated, quality: 6.5}
  - name: far_b
    provider_id: simulated
    remote: true
    backend: {kind: simulated, quality: 8.5}
"""


def start_agent(config: Path, name: str, server: str, prefix: str) -> subprocess.Popen[str]:
    """`agentladder agent` as its own OS process."""
    return subprocess.Popen(
        [sys.executable, "-m", "agentladder.cli", "agent", "--config", str(config),
         "--name", name, "--server", server, "--prefix", prefix],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip


def test_remote_agent_processes_deliberate_through_nats(
    session_nats_server: NatsServer, tmp_path: Path
) -> None:
    """Two agent processes register by heartbeat, answer a deliberation, then stop on
    SIGTERM; each says when it starts, connects and stops."""
    config = tmp_path / "agents.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    prefix = f"t{uuid.uuid4().hex[:8]}"
    server = session_nats_server.url

    async def main() -> None:
        nc = await nats.connect(server)
        store = MemoryStore()
        registry = Registry(store, clock=SystemClock(), heartbeat_interval_s=0.5)
        listener = await serve_heartbeats(nc, registry, prefix)
        processes = [start_agent(config, name, server, prefix) for name in ("far_a", "far_b")]
        try:
            for _ in range(200):
                if set(await registry.online()) == {"far_a", "far_b"}:
                    break
                await asyncio.sleep(0.05)
            assert set(await registry.online()) == {"far_a", "far_b"}
            providers = {
                a: NatsAgentProvider(nc, prefix, a, timeout_s=5) for a in ("far_a", "far_b")
            }
            orchestrator = Orchestrator(
                store=store, registry=registry, oracle=Oracle(store), providers=providers,
            )  # fmt: skip
            record = await orchestrator.run(
                DeliberationRequest(user_query="q", agent_names=["far_a", "far_b"], scope="quick")
            )
            await orchestrator.settle()
            assert record.status is DeliberationStatus.COMPLETED
            assert record.scores == {"far_a": 6.5, "far_b": 8.5}
            assert record.result is not None
            assert record.result.agent_id == "far_b"
            stats = await store.get_stats("far_b")
            assert stats is not None
            assert stats.value.rank == 1
            refused = await nc.request(
                heartbeat_subject(prefix), json.dumps({"name": "far_a", "rank": 99}).encode()
            )
            assert json.loads(refused.data)["error"]["code"] == "SelfPromotion"
            assert registry.refusals["self_promotion"] == 1
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            codes = [process.wait(timeout=20) for process in processes]
            said = []
            for process in processes:
                assert process.stdout is not None
                assert process.stderr is not None
                said.append(process.stdout.read().splitlines())
                process.stdout.close()
                process.stderr.close()
            await listener.unsubscribe()
            await nc.close()
        assert codes == [0, 0]
        for name, lines in zip(("far_a", "far_b"), said, strict=True):
            assert lines == [
                f"agent {name} starting: simulated backend, joining {server} (4 tasks at once)",
                f"agent {name} connected to {server}: heartbeat accepted, answering its tasks",
                f"agent {name} stopped (SIGTERM)",
            ]

    asyncio.run(main())
