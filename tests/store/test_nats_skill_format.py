"""A NATS skill bucket written by the previous format (one ``head`` key holding the log's
last seq, compare-and-set by every event; events stored with their seq 1, 2, ...) keeps
working: its events read back in their order, verify finds its states, new events follow
them, a fit replaces them, and an instance of the previous version is fenced off."""

from __future__ import annotations

import asyncio
import json
import time

import nats
from agentladder.domain.skill.state import AGENT_SKILL, FLEET_SKILL, replace
from agentladder.services.clock import FixedClock
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.nats.config import claim_token, parse_nats_url
from agentladder.store.url import open_store
from tests.domain.skill_helpers import deliberations, honest

TRUTH = {"a": 4.0, "b": 5.5, "c": 6.5, "d": 8.0}
EVENTS = deliberations(TRUTH, 12, honest(0.5), seed=5, size=3)


async def _write_previous_format(url: str) -> None:
    """The bucket as the previous version left it after 8 events, a fit after the 5th."""
    memory = await open_store("memory://")
    skill = SkillService(memory, clock=FixedClock())
    for event in EVENTS[:5]:
        await skill.observe(event)
    await skill.fit()
    for event in EVENTS[5:8]:
        await skill.observe(event)
    store = await open_store(url)  # creates the bucket
    await store.close()
    options = parse_nats_url(url)
    nc = await nats.connect(list(options.servers))
    try:
        kv = await nc.jetstream().key_value(options.skills_bucket)
        await kv.delete("head")  # as if never opened by this version
        for stored in await memory.skill_events():
            await kv.put(f"e.{claim_token(stored.key)}", stored.model_dump_json().encode())
            await kv.put("head", json.dumps({"seq": stored.seq}).encode())
        for state in await memory.list_skills():  # no mark of their fit: written before marks
            await kv.put(f"a.{state.agent_id}", AGENT_SKILL.dump_json(replace(state, fit=0)))
        await kv.put("fleet", FLEET_SKILL.dump_json(await memory.get_fleet_skill()))
    finally:
        await nc.close()


def test_a_bucket_of_the_previous_format_reads_verifies_grows_and_fits(
    nats_store_url: str,
) -> None:
    """Its 8 events read back as seq 1 to 8 and verify finds its states; 4 new events
    follow them (seqs above 8, increasing) and verify still agrees; a fit replaces every
    state and verify agrees again; the head is left held by a fit for ever, so a writer of
    the previous version conflicts instead of appending out of order."""

    async def main() -> None:
        await _write_previous_format(nats_store_url)
        store = await open_store(nats_store_url)
        try:
            old = await store.skill_events()
            assert [e.seq for e in old] == list(range(1, 9))
            assert [e.key for e in old] == [e.key for e in EVENTS[:8]]
            assert (await store.get_fleet_skill()).fit is not None
            checked = await verify_skills(store, SkillService(store).rules)
            assert checked.differences == []
            assert checked.fit_pending == 3
            skill = SkillService(store, clock=FixedClock())
            for event in EVENTS[8:]:
                await skill.observe(event)
            seqs = [e.seq for e in await store.skill_events()]
            assert seqs[:8] == list(range(1, 9))
            assert seqs == sorted(set(seqs))
            assert len(seqs) == len(EVENTS)
            assert (await verify_skills(store, skill.rules)).differences == []
            assert (await skill.fit()).ran
            again = await verify_skills(store, skill.rules)
            assert again.differences == []
            assert again.fit_pending == 0
            options = parse_nats_url(nats_store_url)
            nc = await nats.connect(list(options.servers))
            try:
                kv = await nc.jetstream().key_value(options.skills_bucket)
                head = json.loads((await kv.get("head")).value or b"{}")
            finally:
                await nc.close()
            assert head["fit_until"] > time.time() + 1e9
        finally:
            await store.close()

    asyncio.run(main())
