"""One `agentladder serve` on loopback for the client's tests, with tokens per role."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.served import Server, start_server

ADMIN = "client-admin-token-0123456789"
ORCH = "client-orchestrator-token-0123456789"
AGENT = "client-agent-token-0123456789"
CONFIG = f"""
agents:
  - name: sim_a
    capability_tags: [code]
    backend: {{kind: simulated, quality: 7.0}}
  - name: sim_b
    capability_tags: [code]
    backend: {{kind: simulated, quality: 9.0}}
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: orchestrator, token: {ORCH}}}
    - {{role: agent, token: {AGENT}, agent_id: sim_a}}
"""


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A served instance shared by the client's tests (each uses its own ids)."""
    server = start_server(tmp_path_factory.mktemp("client"), CONFIG, db="client.db")
    try:
        yield server
    finally:
        server.stop()
