"""A store's memory does not grow with the number of agents it has judged.

The durable stores keep recently decoded records only (``store/lru.py``) and the NATS
leaderboard index keeps plain tuples per agent. Counted here: the objects the garbage
collector tracks (what every full collection walks), before and after judging 1,500 more
agents than the caches hold. Kept unbounded, each agent's decoded profile adds about 13
(19,400 more over the 1,500 agents on SQLite with an unbounded cache; about 100 fewer or
more with the bounded one).
"""

from __future__ import annotations

import asyncio
import gc
from functools import partial
from pathlib import Path

import pytest

from agentladder.domain.profile import AgentProfile
from agentladder.store.base import Store
from agentladder.store.lru import DECODED_CACHE
from agentladder.store.records import OracleCommit
from agentladder.store.url import open_store
from tests.store.builders import judgment, judgment_commit

MORE_AGENTS = 1_500
ALLOWED_GROWTH = 5_000
"""Tracked objects allowed to appear while judging ``MORE_AGENTS`` new agents."""


def fold(agent: str, profile: AgentProfile | None) -> OracleCommit:
    """The commit of ``agent``'s judgment on contract c-1."""
    return judgment_commit(profile, judgment(agent, "c-1"))


async def judge_agents(store: Store, first: int, count: int) -> None:
    """One judgment each for agents ``first`` .. ``first + count - 1``."""
    for number in range(first, first + count):
        agent = f"agent-{number}"
        applied = await store.apply_oracle(agent, "c-1", partial(fold, agent))
        assert applied is not None


def tracked_objects() -> int:
    gc.collect()
    return len(gc.get_objects())


@pytest.mark.parametrize("backend", ["sqlite", "nats"])
def test_tracked_objects_stay_flat_as_more_agents_are_judged(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        str(request.getfixturevalue("nats_store_url"))
        if backend == "nats"
        else f"sqlite:///{tmp_path / 'agentladder.db'}"
    )

    async def main() -> tuple[int, int]:
        store = await open_store(url)
        try:
            await judge_agents(store, 0, DECODED_CACHE + 200)  # the caches are full
            before = tracked_objects()
            await judge_agents(store, DECODED_CACHE + 200, MORE_AGENTS)
            after = tracked_objects()
            rows = await store.leaderboard(None, 1000)
            assert len(rows) == 1000  # every agent judged is on the board
            return before, after
        finally:
            await store.close()

    before, after = asyncio.run(main())
    assert after - before < ALLOWED_GROWTH, (before, after)
