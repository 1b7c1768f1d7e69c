"""``apply_oracle`` for stores that offer only compare-and-set: read, fold, commit, retry."""

from __future__ import annotations

from agentladder.errors import AlreadyApplied, NotFound
from agentladder.store.base import OracleApplied, OracleFold, Store
from agentladder.store.records import OracleEvent
from agentladder.store.retry import retry_on_conflict

__all__ = ["apply_by_compare_and_set"]


async def apply_by_compare_and_set(
    store: Store, agent_id: str, key: str, fold: OracleFold
) -> OracleApplied | None:
    """The contract of ``Store.apply_oracle`` from get_event, get_profile and commit_oracle."""

    async def existing(event: OracleEvent) -> OracleApplied:
        current = await store.get_profile(agent_id)
        if current is None:
            raise NotFound("profile", agent_id)
        return OracleApplied(event, current.value, created=False)

    async def attempt() -> OracleApplied | None:
        stored = await store.get_event(agent_id, key)
        if stored is not None:
            return await existing(stored)
        current = await store.get_profile(agent_id)
        commit = fold(None if current is None else current.value)
        if commit is None:
            return None
        try:
            await store.commit_oracle(commit, 0 if current is None else current.revision)
        except AlreadyApplied as raced:
            if not isinstance(raced.existing, OracleEvent):
                raise
            return await existing(raced.existing)
        stored = await store.get_event(agent_id, key)  # as stored, with its seq
        return OracleApplied(stored or commit.event, commit.profile, created=True)

    return await retry_on_conflict(attempt)
