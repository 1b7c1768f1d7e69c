"""An API over real services on a fresh store, called through httpx (ASGI, in-process)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest

from agentladder.api.app import create_app
from agentladder.config import Settings, parse_settings
from agentladder.services.container import Services, build_services

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


Body = Callable[[httpx.AsyncClient, Services], Coroutine[Any, Any, None]]


def call_api(body: Body, *, tokens: bool = True, store: str = "memory://") -> None:
    """Build services and the app, run ``body(client, services)``, close everything."""

    async def main() -> None:
        settings: Settings = parse_settings({**CONFIG, **(TOKENS if tokens else {})})
        services = await build_services(settings, store_url=store, seed=7)
        transport = httpx.ASGITransport(app=create_app(services), client=("127.0.0.1", 5000))
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                await body(client, services)
        finally:
            await services.close()

    asyncio.run(main())


@pytest.fixture
def api() -> Callable[..., None]:
    """``api(body, tokens=True)`` runs a test body against a fresh API."""
    return call_api
