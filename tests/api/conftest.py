"""An API over real services on a fresh store, called through httpx (ASGI, in-process)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.inprocess import Body, call_app

CONFIG: dict[str, Any] = {
    "agents": [
        {"name": "sim_a", "provider_id": "sim", "capability_tags": ["audit"],
         "input_price_per_mtok": 2.5, "output_price_per_mtok": 10.0,
         "backend": {"kind": "simulated", "quality": 7.5}},
        {"name": "sim_b", "provider_id": "sim", "capability_tags": ["code"],
         "backend": {"kind": "simulated", "quality": 8.2}},
        {"name": "sim_c", "provider_id": "other", "capability_tags": ["audit", "code"],
         "backend": {"kind": "simulated", "quality": 6.1}},
    ],
    "orchestrator": {"timeout_s": 5},
}  # fmt: skip

ADMIN = "admin-token-0123456789"
ORCH = "orchestrator-token-0123456789"
AGENT_A = "agent-a-token-0123456789"
TOKENS: dict[str, Any] = {
    "api": {
        "tokens": [
            {"role": "admin", "token": ADMIN},
            {"role": "orchestrator", "token": ORCH},
            {"role": "agent", "token": AGENT_A, "agent_id": "sim_a"},
        ]
    }
}


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def call_api(body: Body, *, tokens: bool = True, store: str = "memory://") -> None:
    """Run ``body(client, services)`` against the API of ``CONFIG`` (with the tokens)."""
    call_app({**CONFIG, **(TOKENS if tokens else {})}, body, store=store)


@pytest.fixture
def api() -> Callable[..., None]:
    """``api(body, tokens=True)`` runs a test body against a fresh API."""
    return call_api
