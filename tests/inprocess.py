"""The API in-process: real services on a fresh store, called through httpx's ASGI transport."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import httpx

from agentladder.api.app import create_app
from agentladder.config import parse_settings
from agentladder.services.clock import Clock
from agentladder.services.container import Services, build_services

__all__ = ["Body", "call_app"]

Body = Callable[[httpx.AsyncClient, Services], Coroutine[Any, Any, None]]


def call_app(
    config: dict[str, Any],
    body: Body,
    *,
    store: str = "memory://",
    clock: Clock | None = None,
    seed: int | None = 7,
) -> None:
    """Build the services of ``config``, run ``body(client, services)``, close everything."""

    async def main() -> None:
        services = await build_services(
            parse_settings(config), store_url=store, clock=clock, seed=seed
        )
        transport = httpx.ASGITransport(app=create_app(services), client=("127.0.0.1", 5000))
        try:
            local = "http://localhost"  # a Host the app answers to (api/hosts.py)
            async with httpx.AsyncClient(transport=transport, base_url=local) as client:
                await body(client, services)
        finally:
            await services.close()

    asyncio.run(main())
