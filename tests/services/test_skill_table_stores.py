"""The fit's table read page by page from each store's log (``fitting.read_log``) is the
table the whole log's evidence gave before, up to the log's end or to a given seq."""

from __future__ import annotations

from typing import Any

import pytest

from agentladder.services.skill import fitting
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from tests.domain.table_helpers import assert_same_table, generated_log


def test_the_paged_table_of_a_stored_log_equals_the_whole_one(
    with_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A generated log stored through the service, read back 7 events a page: the same
    table as the reference builds from every event at once, and the same up to a seq."""
    monkeypatch.setattr(fitting, "PAGE", 7)
    evidence = generated_log(160, seed=11)

    async def body(store: Store) -> None:
        await SkillService(store).observe_many(evidence)
        stored = await fitting.events_after(store, 0)
        assert [e.key for e in stored] == [e.key for e in evidence]
        log = await fitting.read_log(store)
        assert (log.seq, log.events) == (stored[-1].seq, len(evidence))
        assert_same_table(log.table, evidence)
        middle = stored[99].seq
        part = await fitting.read_log(store, upto=middle)
        assert (part.seq, part.events) == (middle, 100)
        assert_same_table(part.table, evidence[:100])

    with_store(body)
