"""``off_loop``: CPU-heavy work (a skill board over every agent, a dashboard page's data
and its rendering) runs on a few threads of its own instead of the event loop.

On the loop such work holds every other request for as long as it runs: a page of an
agent judged in 3,000 task types took about 2 s to render, and ``/healthz`` waited that
long. On a thread it shares the interpreter with the loop, which gets its turn at least
every switch interval (5 ms), so the loop keeps answering. At most ``WORKERS`` such jobs
run at once; more wait their turn (bounded by the connections the server holds). A job
that has not started when its request is cancelled never starts; one that has runs to
its end (Python cannot stop a thread), and a stop of the server does not wait for it
(``api/server.py``).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["WORKERS", "off_loop"]

T = TypeVar("T")
WORKERS = 2
"""Threads for CPU-heavy work (the machines this runs on have a few cores; more threads
would only wait on each other for the interpreter)."""

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool  # noqa: PLW0603 (one pool for the process, made when first needed)
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="agentladder-cpu")
        return _pool


async def off_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on one of the CPU threads; its result or its exception."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))
