"""What a seeded mix of judgments leaves in a store, pinned in ``fold_stores.json``.

400 judgments over 12 agents: the first 150 submitted one by one (what
``POST /oracle/judgments`` does: probation on a failure, the server's clock), the rest
imported in batches (``agentladder import``: history, new agents), with repeats, a
conflicting repeat and a raw award among them. The snapshot is every agent's events,
profile JSON, ledger lines and skill state, and the fleet's skill state, as JSON text.
The file was written by the fold that copied pydantic models at each step; the fold on
plain values must leave exactly the same (``test_fold_stores.py``, on every store).

Regenerate only after an intended change of the rules' results, with
``.venv/bin/python -m tests.golden.fold_stores`` (memory store), and review the diff.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import random
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agentladder.config import parse_settings
from agentladder.domain.skill.state import AGENT_SKILL, FLEET_SKILL, AgentSkill, replace
from agentladder.importing.jsonl import read_jsonl
from agentladder.importing.run import run_import
from agentladder.services.clock import FixedClock
from agentladder.services.container import Services, build_services
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.skill.fitting import events_after

__all__ = ["GOLDEN", "lines", "snapshot_of"]

GOLDEN = Path(__file__).with_name("fold_stores.json")
COUNT = 400
ONE_BY_ONE = 150
AGENTS = [f"agent-{i}" for i in range(12)]
START = datetime(2026, 1, 1, tzinfo=UTC)


def lines(seed: int = 27) -> list[dict[str, Any]]:
    """``COUNT`` judgments as JSON objects: every optional field, failures, repeats."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(COUNT):
        line: dict[str, Any] = {
            "agent_id": rng.choice(AGENTS),
            "contract_id": f"c-{i}",
            "task_type": rng.choice(("sql", "code", "docs", "image_generation")),
            "success": rng.random() < 0.85,
            "retries": rng.choice((0, 0, 0, 1, 2)),
            "cost": round(rng.uniform(0, 0.05), 4),
        }
        if rng.random() < 0.85:
            line["score"] = rng.choice((10.0, 9.5, round(rng.uniform(0, 10), 2), 3))
        if rng.random() < 0.7:
            line["budget"] = 0.04
        if rng.random() < 0.6:
            line["duration_ms"] = rng.randrange(100, 60_000)
            line["time_limit_ms"] = 30_000
        if rng.random() < 0.2:
            line["judge"] = rng.choice(("gpt-4o", "human:ann"))
        if rng.random() < 0.2:
            line["observed_at"] = (START - timedelta(hours=rng.randrange(1, 500))).isoformat()
        if rng.random() < 0.1:
            line["complexity"] = rng.choice(("simple", "medium", "complex"))
        if rng.random() < 0.1:
            line["provider"], line["model"] = "acme", rng.choice(("m1", "m2"))
        out.append(line)
    out.append(dict(out[3]))  # a repeat of a judgment submitted one by one
    out.append(dict(out[200]))  # a repeat within the import
    out.append({**out[201], "score": 1.0 if out[201].get("score") != 1.0 else 2.0})  # conflict
    return out


async def _apply(services: Services, clock: FixedClock, folder: Path) -> None:
    """Submit the first ``ONE_BY_ONE`` one at a time, a raw award, then import the rest."""
    items = lines()
    for line in items[:ONE_BY_ONE]:
        clock.advance(7)
        await services.oracle.submit_for_judgment(
            JudgmentRequest.model_validate({**line, "new_agent": True})
        )
    await services.oracle.award_xp(AGENTS[0], "bug_report", 300, "bug-1")
    clock.advance(60)
    path = folder / "rest.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in items[ONE_BY_ONE:]))
    await run_import(services.oracle, read_jsonl(path), batch=64)


async def _snapshot(services: Services) -> dict[str, Any]:
    store = services.store
    agents: dict[str, Any] = {}
    skills = await store.get_skills(AGENTS)
    for agent_id in AGENTS:
        found = await store.get_profile(agent_id)
        ledger = await store.ledger(agent_id, limit=1000)
        skill = skills.get(agent_id)
        agents[agent_id] = {
            "profile": None if found is None else found.value.model_dump_json(),
            "events": [e.model_dump_json() for e in await store.events(agent_id)],
            "ledger": [e.model_dump_json(exclude={"id"}) for e in ledger],
            "skill": None if skill is None else AGENT_SKILL.dump_json(_unmarked(skill)).decode(),
        }
    fleet = await store.get_fleet_skill()
    if fleet.fit is not None:  # a seq counted in events, as memory and SQLite number them
        seqs = [e.seq for e in await events_after(store, 0)]
        fleet = replace(fleet, fit=replace(fleet.fit, seq=bisect.bisect_right(seqs, fleet.fit.seq)))
    return {"agents": agents, "fleet": FLEET_SKILL.dump_json(fleet).decode()}


def _unmarked(skill: AgentSkill) -> AgentSkill:
    """The state without the mark of its fit (a seq: NATS's are stream sequences)."""
    return replace(skill, fit=0)


def snapshot_of(store_url: str) -> dict[str, Any]:
    """Apply ``lines()`` to a fresh store at ``store_url``; the snapshot of what it holds."""

    async def main() -> dict[str, Any]:
        clock = FixedClock(START)
        services = await build_services(parse_settings(None), store_url=store_url, clock=clock)
        try:
            with tempfile.TemporaryDirectory() as folder:
                await _apply(services, clock, Path(folder))
            return await _snapshot(services)
        finally:
            await services.close()

    return asyncio.run(main())


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(snapshot_of("memory://"), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
