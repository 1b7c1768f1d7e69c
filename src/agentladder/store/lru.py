"""A bounded cache of decoded records, shared by a store's threads.

Stores keep records they decoded (a profile, an agent's stats) to skip decoding them
again while the stored revision is the same. Unbounded, such a map grows with every agent
ever touched: with 100,000 agents it held most of the process's memory, and every full
garbage collection walked each cached model (hundreds of milliseconds, growing).
``Lru`` keeps the most recently used entries only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["DECODED_CACHE", "Lru"]

K = TypeVar("K")
V = TypeVar("V")

DECODED_CACHE = 1_000
"""Entries a store keeps of each kind of decoded record: the agents being worked on now."""


class Lru(Generic[K, V]):
    """At most ``size`` entries; the least recently read or written is dropped first.
    Every operation holds a lock, so a writer thread and the event loop may share one."""

    def __init__(self, size: int = DECODED_CACHE) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, not {size}")
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Set the entry of ``key``; drop the least recently used beyond the size."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            if len(self._items) > self._size:
                self._items.popitem(last=False)

    def update(self, entries: dict[K, V]) -> None:
        """``put`` each of ``entries``."""
        for key, value in entries.items():
            self.put(key, value)

    def pop(self, key: K) -> None:
        """Forget ``key`` if present."""
        with self._lock:
            self._items.pop(key, None)
