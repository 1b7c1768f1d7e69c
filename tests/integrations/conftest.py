"""The LiteLLM integration's tests: LiteLLM reads its model prices from the package, not
from the network (this machine has none), and one served ladder with three agents."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.served import Server, start_server

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

ADMIN = "litellm-admin-token-0123456789"
ORCH = "litellm-orchestrator-token-0123456789"
CONFIG = f"""
agents:
  - name: alpha
    backend: {{kind: simulated, quality: 7.0}}
  - name: bravo
    backend: {{kind: simulated, quality: 7.0}}
  - name: charlie
    backend: {{kind: simulated, quality: 7.0}}
api:
  tokens:
    - {{role: admin, token: {ADMIN}}}
    - {{role: orchestrator, token: {ORCH}}}
"""


@pytest.fixture(scope="package")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A served ladder the LiteLLM tests report to and route by."""
    server = start_server(tmp_path_factory.mktemp("litellm"), CONFIG, db="litellm.db")
    try:
        yield server
    finally:
        server.stop()
