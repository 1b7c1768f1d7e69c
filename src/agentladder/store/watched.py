"""A store that says which agents each write touched: ``WatchedStore`` wraps any store
(memory, SQLite, NATS) and, after every write made through it, tells its ``Changes``
which agents the write concerned (all of them for a skill fit, which moves the fleet's
estimates). Reads, and every other attribute, go to the wrapped store unchanged. On a
store that can say what other instances write (NATS: ``follow``), those are reported
too.

This is how what is derived in memory from the store (the routing projection,
``services/routing/projection.py``) follows the writes of its own instance at once. A
write that fails is reported too: it may have been stored before the error reached us,
and reading an agent again costs little (docs/routing.md, "The projection").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from agentladder.store.base import OracleFold, OracleItem, SkillItem, StatsUpdate, Store
from agentladder.store.records import OracleCommit, Registration
from agentladder.store.skills import FitFold, SkillApplied, SkillFold

__all__ = ["Changes", "WatchedStore"]


class Changes:
    """Who listens to the writes: ``agents(ids)`` after a write that touched those
    agents, ``everything()`` after one that may have touched them all."""

    def __init__(self) -> None:
        self._agents: list[Callable[[Collection[str]], None]] = []
        self._everything: list[Callable[[], None]] = []
        self._registrations: list[Callable[[Registration], None]] = []

    def listen(
        self,
        agents: Callable[[Collection[str]], None],
        everything: Callable[[], None],
        registration: Callable[[Registration], None] | None = None,
    ) -> None:
        """Call ``agents`` with the ids each write touched, ``everything`` after a fit,
        and ``registration`` (instead of ``agents``) with a registration this instance
        stored (a heartbeat: what was written is known, nothing needs reading again)."""
        self._agents.append(agents)
        self._everything.append(everything)
        self._registrations.append(registration or (lambda stored: agents((stored.agent_id,))))

    def registration(self, registration: Registration) -> None:
        """A write stored ``registration``."""
        for listener in self._registrations:
            listener(registration)

    def agents(self, ids: Collection[str]) -> None:
        """A write touched ``ids``."""
        for listener in self._agents:
            listener(ids)

    def everything(self) -> None:
        """A write may have touched every agent."""
        for listener in self._everything:
            listener()


class WatchedStore:
    """``store``, with every write reported to ``changes`` once it returns (or fails)."""

    def __init__(self, store: Store, changes: Changes) -> None:
        self.wrapped = store
        self.changes = changes

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def follow(self) -> bool:
        """Report the writes of other instances too, where the store can say them (NATS:
        its streams, ``store/nats/changes.py``); whether it can."""
        follow = getattr(self.wrapped, "follow", None)
        if follow is None:
            return False
        await follow(self.changes.agents, self.changes.everything, self.changes.registration)
        return True

    async def commit_stats(
        self, updates: Mapping[str, StatsUpdate], *, marker: str | None = None
    ) -> dict[str, int]:
        """``Store.commit_stats``, reported."""
        try:
            return await self.wrapped.commit_stats(updates, marker=marker)
        finally:
            self.changes.agents(list(updates))

    async def commit_oracle(self, commit: OracleCommit, expected_revision: int) -> int:
        """``Store.commit_oracle``, reported."""
        try:
            return await self.wrapped.commit_oracle(commit, expected_revision)
        finally:
            self.changes.agents((commit.event.agent_id,))

    async def apply_oracle(self, agent_id: str, key: str, fold: OracleFold) -> Any:
        """``Store.apply_oracle``, reported."""
        try:
            return await self.wrapped.apply_oracle(agent_id, key, fold)
        finally:
            self.changes.agents((agent_id,))

    async def apply_oracle_many(self, items: Sequence[OracleItem]) -> Any:
        """``Store.apply_oracle_many``, reported."""
        try:
            return await self.wrapped.apply_oracle_many(items)
        finally:
            self.changes.agents({agent for agent, _, _ in items})

    async def apply_oracle_then_skill(
        self, agent_id: str, key: str, fold: OracleFold, skill: SkillItem
    ) -> Any:
        """``Store.apply_oracle_then_skill``, reported."""
        try:
            return await self.wrapped.apply_oracle_then_skill(agent_id, key, fold, skill)
        finally:
            self.changes.agents(dict.fromkeys((agent_id, *skill[1])))

    async def apply_oracle_many_then_skill(
        self, pairs: Sequence[tuple[OracleItem, SkillItem]]
    ) -> Any:
        """``Store.apply_oracle_many_then_skill``, reported."""
        try:
            return await self.wrapped.apply_oracle_many_then_skill(pairs)
        finally:
            touched = (a for (agent, _, _), (_, agents, _) in pairs for a in (agent, *agents))
            self.changes.agents(dict.fromkeys(touched))

    async def apply_skill(self, key: str, agents: Sequence[str], fold: SkillFold) -> SkillApplied:
        """``Store.apply_skill``, reported."""
        try:
            return await self.wrapped.apply_skill(key, agents, fold)
        finally:
            self.changes.agents(agents)

    async def apply_skill_many(
        self, items: Sequence[SkillItem], *, fresh: bool = False
    ) -> list[SkillApplied]:
        """``Store.apply_skill_many``, reported."""
        try:
            return await self.wrapped.apply_skill_many(items, fresh=fresh)
        finally:
            self.changes.agents({agent for _, agents, _ in items for agent in agents})

    async def commit_skill_fit(self, seq: int, fold: FitFold) -> None:
        """``Store.commit_skill_fit``, reported: the fleet's estimates moved."""
        try:
            await self.wrapped.commit_skill_fit(seq, fold)
        finally:
            self.changes.everything()

    async def put_registration(self, registration: Registration) -> None:
        """``Store.put_registration``, reported."""
        try:
            await self.wrapped.put_registration(registration)
        except BaseException:
            self.changes.agents((registration.agent_id,))
            raise
        self.changes.registration(registration)
