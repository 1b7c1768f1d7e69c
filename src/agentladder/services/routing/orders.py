"""The orders of a routing table as the projection serves them: a sorted list of keys
kept in memory, read lazily, with the few agents whose place changes at the moment of
the call (a degraded agent ranks by its skill times the share of calls it answers)
taken out and merged back at their place.

``Merged`` is a ``Sequence``: ``route`` reads it by index from the top and stops as soon
as it has its picks and the agents it lists, so a call builds only the candidates it
reads. Every key ends with the agent id, so the order is total and equals that of
``routing_table`` (``domain/routing/table.py``) over the same candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, overload

__all__ = ["Merged"]

T = TypeVar("T")
Key = tuple[Any, ...]


class Merged(Sequence[T]):
    """``base`` (sorted keys, the agent id last) without the agents in ``moved``, merged
    with ``extra`` (sorted (key, item) pairs); ``item(key)`` builds the item of a base key."""

    def __init__(
        self,
        base: Sequence[Key],
        item: Callable[[Key], T],
        moved: set[str],
        extra: Sequence[tuple[Key, T]],
        moved_in_base: int,
    ) -> None:
        self._base = base
        self._item = item
        self._moved = moved
        self._extra = extra
        self._len = len(base) - moved_in_base + len(extra)
        self._out: list[T] = []
        self._i = 0  # next base key
        self._j = 0  # next extra pair

    @property
    def built(self) -> int:
        """How many items have been built so far (read, or within a chunk of those read)."""
        return len(self._out)

    def __len__(self) -> int:
        return self._len

    def _fill(self, upto: int) -> None:
        """Build the items up to index ``upto`` (included)."""
        base, extra, out, moved = self._base, self._extra, self._out, self._moved
        i, j = self._i, self._j
        size, more = len(base), len(extra)
        while len(out) <= upto and (i < size or j < more):
            if i < size and base[i][-1] in moved:
                i += 1
                continue
            if j < more and (i >= size or extra[j][0] < base[i]):
                out.append(extra[j][1])
                j += 1
            else:
                out.append(self._item(base[i]))
                i += 1
        self._i, self._j = i, j

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            self._fill(self._len - 1)
            return self._out[index]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError(index)
        if index >= len(self._out):
            self._fill(index)
        return self._out[index]

    def __iter__(self) -> Iterator[T]:
        index = 0
        while index < self._len:
            if index >= len(self._out):
                self._fill(index + 63)
            yield self._out[index]
            index += 1
