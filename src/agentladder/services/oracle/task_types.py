"""``TaskTypeBook``: the store's bound on task types (``oracle.max_task_types``), checked
before a write that may add one (a judgment, a batch, a deliberation, a report).

The task types the store holds (``Store.task_types``) are read when a type this instance
has not seen comes, at most once every ``RELOAD_S`` (between two reads the set known is
used as it is), and a type admitted is counted at once, so that writes racing for the
last places on one instance do not pass the bound together (a type admitted but never
stored, its write refused, is forgotten at the next read). Several instances each count
their own: together they may pass it by the writes in flight when it is reached, never by
more. The per-agent bound (``max_task_types_per_agent``) is exact on every store: it is
checked by the fold of the judgment, in the step that writes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

from agentladder.domain.rules import OracleRules
from agentladder.domain.task_types import check_store_task_types
from agentladder.store.base import Store

__all__ = ["RELOAD_S", "TaskTypeBook"]

RELOAD_S = 1.0
"""The least time between two reads of the store's task types."""


class TaskTypeBook:
    """The task types of one store as this instance knows them, and the store's bound."""

    def __init__(
        self, store: Store, rules: OracleRules, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.rules = rules
        self._clock = clock
        self._known: set[str] = set()
        self._read_at: float | None = None

    async def admit(self, task_types: Collection[str]) -> None:
        """Return when ``task_types`` fit within ``oracle.max_task_types`` (those new to the
        store are counted from now on); ``TooManyTaskTypes`` naming the first that does not."""
        new = [t for t in task_types if t not in self._known]
        if not new:
            return
        now = self._clock()
        if self._read_at is None or now - self._read_at >= RELOAD_S:
            self._known = set(await self.store.task_types())  # admitted but never stored: gone
            self._read_at = now
        check_store_task_types(self._known, new, self.rules.max_task_types)
        self._known.update(new)
