"""The bounded cache of decoded records: least recently used dropped first, thread-safe."""

from __future__ import annotations

import threading

import pytest

from agentladder.store.lru import Lru


def test_the_least_recently_used_entry_is_dropped_first() -> None:
    cache: Lru[str, int] = Lru(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c"), len(cache)) == (1, 3, 2)
    cache.put("a", 10)  # an overwrite counts as a use and keeps the size
    cache.put("d", 4)
    assert (cache.get("a"), cache.get("c"), cache.get("d")) == (10, None, 4)
    cache.pop("a")
    cache.pop("missing")
    assert (cache.get("a"), len(cache)) == (None, 1)


def test_a_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="size must be at least 1, not 0"):
        Lru(0)


def test_threads_sharing_one_cache_never_exceed_its_size() -> None:
    cache: Lru[int, int] = Lru(100)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(20_000):
                cache.put(offset + i % 300, i)
                cache.get(offset + (i * 7) % 300)
                if i % 50 == 0:
                    cache.pop(offset + i % 300)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n * 1000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) <= 100
