"""``KnownNames``: the agents the Oracle knows, indexed for suggestions, read again at
most once every ``KNOWN_RELOAD_S`` (a 404 anyone may ask for reads no profile)."""

from __future__ import annotations

import asyncio

from agentladder.domain.agents import AgentConfig
from agentladder.services.oracle.known import KNOWN_RELOAD_S, KnownNames, not_found
from agentladder.store.memory import MemoryStore
from agentladder.store.records import Registration


def test_the_index_is_read_again_only_after_its_interval() -> None:
    """A registration made after the first read is suggested only once the interval has
    passed; an id that is known gets no suggestion (it exists, it lacks what was asked)."""

    async def main() -> None:
        store = MemoryStore()
        now = [100.0]
        known = KnownNames(store, {"echo": AgentConfig(name="echo")}, clock=lambda: now[0])
        first = await not_found("profile", "ehco", known)
        assert first.suggestions == ["echo"]
        assert str(first) == "profile 'ehco' not found; did you mean echo?"
        foxtrot = AgentConfig(name="foxtrot")
        await store.put_registration(Registration(config=foxtrot, first_seen=1.0, last_seen=1.0))
        assert (await not_found("agent", "fxtrot", known)).suggestions == []
        now[0] += KNOWN_RELOAD_S
        assert (await not_found("agent", "fxtrot", known)).suggestions == ["foxtrot"]
        assert (await not_found("skill", "foxtrot", known)).suggestions == []

    asyncio.run(main())
