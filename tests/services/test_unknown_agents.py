"""Typos do not create agents: a judgment of an id nobody configured, registered or judged
before is refused naming the closest known ids, unless it says it means a new agent, the
configuration accepts any, or the store knows no agent yet (the first one); nothing is
stored for a refused one. On every store."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.config import AgentSettings
from agentladder.domain.rules import OracleRules
from agentladder.errors import UnknownAgent
from agentladder.services.oracle.batch import ItemStatus, submit_many
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.store.base import Store

CONFIGURED = {name: AgentSettings(name=name) for name in ("charlie", "alice")}


def judged(agent: str, contract: str, **more: Any) -> JudgmentRequest:
    """A judgment of ``agent`` under ``contract``, scored 8."""
    return JudgmentRequest(agent_id=agent, contract_id=contract, score=8.0, **more)


def test_a_typo_is_refused_with_the_closest_known_ids_and_nothing_stored(
    with_store: Any,
) -> None:
    """ "chalie" with charlie and alice configured: refused, field agent_id, suggesting
    charlie; no profile, no event; with new_agent it is judged (and known from then on)."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, agents=CONFIGURED)
        with pytest.raises(UnknownAgent) as refused:
            await oracle.submit_for_judgment(judged("chalie", "c1"))
        assert refused.value.field == "agent_id"
        assert refused.value.suggestions == ["charlie"]
        assert "did you mean charlie?" in str(refused.value)
        assert await store.get_profile("chalie") is None
        assert await store.events("chalie") == []
        result = await oracle.submit_for_judgment(judged("chalie", "c1", new_agent=True))
        assert result.xp_awarded > 0
        again = await oracle.submit_for_judgment(judged("chalie", "c2"))  # known now
        assert again.profile.stats.total_tasks == 2

    with_store(body)


def test_a_store_that_knows_no_agent_accepts_the_first(with_store: Any) -> None:
    """No configuration, nothing stored: the first judgment makes the first agent; the
    next unknown id is refused, suggesting it when close."""

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        await oracle.submit_for_judgment(judged("gpt4o", "c1"))
        with pytest.raises(UnknownAgent) as refused:
            await oracle.submit_for_judgment(judged("gpt-4o", "c2"))
        assert refused.value.suggestions == ["gpt4o"]
        with pytest.raises(UnknownAgent):
            await oracle.award_xp("gpt-4o", "bonus", 5, "b1")

    with_store(body)


def test_accept_unregistered_takes_any_id(with_store: Any) -> None:
    """oracle.accept_unregistered: true: an unknown id is judged without being told."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, OracleRules(accept_unregistered=True), agents=CONFIGURED)
        result = await oracle.submit_for_judgment(judged("outsider", "c1"))
        assert result.agent_id == "outsider"

    with_store(body)


def test_a_batch_refuses_the_typo_item_alone_and_takes_a_new_agents_items(
    with_store: Any,
) -> None:
    """In one batch: charlie (configured) imported; "chalie" refused with the suggestion;
    newbie said new: imported, and its second item (not said new) is of a known agent."""

    async def body(store: Store) -> None:
        oracle = Oracle(store, agents=CONFIGURED)
        items = [
            judged("charlie", "c1"), judged("chalie", "c2"),
            judged("newbie", "c3", new_agent=True), judged("newbie", "c4"),
        ]  # fmt: skip
        found = await submit_many(oracle, items)
        assert [f.status for f in found] == [
            ItemStatus.IMPORTED, ItemStatus.REFUSED, ItemStatus.IMPORTED, ItemStatus.IMPORTED,
        ]  # fmt: skip
        assert found[1].error is not None
        assert found[1].error.startswith("agent_id: is not a known agent")
        assert "did you mean charlie?" in found[1].error
        assert await store.get_profile("chalie") is None

    with_store(body)
