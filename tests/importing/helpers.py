"""Services over a store for a test body, outside the API."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from agentladder.config import parse_settings
from agentladder.services.container import Services, build_services

T = TypeVar("T")


def run_with_services(
    store: str, body: Callable[[Services], Coroutine[Any, Any, T]], config: Any = None
) -> T:
    """Build the services of ``config`` on ``store``, run ``body``, close them."""

    async def main() -> T:
        services = await build_services(parse_settings(config), store_url=store)
        try:
            return await body(services)
        finally:
            await services.close()

    return asyncio.run(main())
