"""Heartbeats against a real `agentladder serve` on loopback: for an agent defined in the
config, the config is the authority for its declaration; an agent not in the config
declares itself whole at each heartbeat."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from tests.served import Server, start_server

AGENT = "declared-agent-token-0123456789"
OUTSIDER = "outsider-agent-token-0123456789"
CONFIG = f"""
agents:
  - name: sim_a
    provider_id: sim
    model_name: sim-7
    description: the configured one
    capability_tags: [audit]
    backend: {{kind: simulated, quality: 7.0}}
api:
  tokens:
    - {{role: agent, token: {AGENT}, agent_id: sim_a}}
    - {{role: agent, token: {OUTSIDER}, agent_id: outsider}}
"""
DECLARED = {"provider_id": "sim", "model_name": "sim-7", "description": "the configured one",
            "capability_tags": ["audit"], "remote": False}  # fmt: skip


def _beat(server: Server, token: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(
        server.url("/agents/heartbeat"), json=body,
        headers={"authorization": f"Bearer {token}"}, timeout=10,
    )  # fmt: skip


def _declared(server: Server, name: str) -> dict[str, Any]:
    agent: dict[str, Any] = httpx.get(server.url(f"/agents/{name}"), timeout=10).json()
    return {key: agent[key] for key in DECLARED}


def _refusals(server: Server, reason: str) -> float:
    text = httpx.get(server.url("/metrics"), timeout=10).text
    found = re.search(rf'^agentladder_refusals_total{{reason="{reason}"}} (\S+)$', text, re.M)
    return 0.0 if found is None else float(found.group(1))


def test_a_heartbeat_may_not_rewrite_a_configured_agent(tmp_path: Path) -> None:
    """The agent token of a configured agent: a heartbeat changing its model, or wiping
    its fields, is refused 409 naming the fields and counted; one agreeing with the config
    is accepted and changes nothing."""
    server = start_server(tmp_path, CONFIG)
    try:
        assert _declared(server, "sim_a") == DECLARED
        rewrite = _beat(server, AGENT, {"name": "sim_a", "model_name": "gpt-5", "remote": True,
                                        "description": "", "capability_tags": []})  # fmt: skip
        assert rewrite.status_code == 409, rewrite.text
        error = rewrite.json()["error"]
        assert error["code"] == "declaration_mismatch"
        assert error["fields"] == ["capability_tags", "description", "model_name"]
        assert _declared(server, "sim_a") == DECLARED
        assert _refusals(server, "declaration_mismatch") == 1
        agreeing = _beat(server, AGENT, {"name": "sim_a", "model_name": "sim-7"})
        assert agreeing.status_code == 200, agreeing.text
        assert _declared(server, "sim_a") == DECLARED  # the fields it left out are kept
    finally:
        server.stop()


def test_an_agent_outside_the_config_declares_itself_whole(tmp_path: Path) -> None:
    """An agent not in the config: each heartbeat replaces its declaration (a field it
    leaves out returns to its default), as documented."""
    server = start_server(tmp_path, CONFIG)
    try:
        full = {"name": "outsider", "provider_id": "x", "model_name": "m-1",
                "description": "first", "capability_tags": ["code"]}  # fmt: skip
        assert _beat(server, OUTSIDER, full).status_code == 200
        assert _declared(server, "outsider")["description"] == "first"
        assert _beat(server, OUTSIDER, {"name": "outsider", "model_name": "m-2"}).status_code == 200
        after = _declared(server, "outsider")
        assert after["model_name"] == "m-2"
        assert after["description"] == ""
        assert after["capability_tags"] == []
        assert after["remote"] is True
    finally:
        server.stop()
