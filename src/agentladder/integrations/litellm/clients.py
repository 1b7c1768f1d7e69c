"""``LadderClients``: the sync and async clients of one ladder, made when first used; the
async one per event loop (httpx's connections belong to the loop that opened them)."""

from __future__ import annotations

import asyncio

from agentladder.client import AsyncLadder, Ladder
from agentladder.integrations.litellm.settings import LadderSettings

__all__ = ["LadderClients"]


class LadderClients:
    """The clients of ``settings``' ladder: no retries, its timeout (a call waits on none)."""

    def __init__(self, settings: LadderSettings) -> None:
        self.settings = settings
        self._sync: Ladder | None = None
        self._async: tuple[asyncio.AbstractEventLoop, AsyncLadder] | None = None

    def sync(self) -> Ladder:
        """The sync client."""
        if self._sync is None:
            s = self.settings
            self._sync = Ladder(s.url, s.token, timeout=s.timeout_s, retries=0)
        return self._sync

    def running(self) -> AsyncLadder:
        """The async client of the running loop."""
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            s = self.settings
            self._async = (loop, AsyncLadder(s.url, s.token, timeout=s.timeout_s, retries=0))
        return self._async[1]

    def close(self) -> None:
        """Close the sync client's connections."""
        if self._sync is not None:
            self._sync.close()
            self._sync = None

    async def aclose(self) -> None:
        """Close both clients' connections (the async one's, on its own loop)."""
        self.close()
        found, self._async = self._async, None
        if found is not None and found[0] is asyncio.get_running_loop():
            await found[1].close()
