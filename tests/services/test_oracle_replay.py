"""Replay: the stored profiles equal the fold of their events, on every store; tampering shows."""

from __future__ import annotations

import asyncio
import itertools
import random
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentladder.domain.rules import OracleRules
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.oracle.service import Oracle
from agentladder.services.oracle.verify import verify_store
from agentladder.store.base import Store
from agentladder.store.url import open_store

AGENTS = itertools.count()

KINDS = ["judge", "judge", "judge", "judge", "fail_check", "bonus"]


def random_steps(seed: int, count: int) -> list[tuple[str, str, float | None, bool, int]]:
    """``count`` random events: mostly judgments, some failed checks and bonuses."""
    rng = random.Random(seed)
    return [
        (
            rng.choice(KINDS),
            rng.choice(["sql", "poetry", "vision"]),
            None if rng.random() < 0.1 else round(rng.uniform(0, 10), 2),
            rng.random() < 0.85,
            rng.choice([0, 0, 1, 2]),
        )
        for _ in range(count)
    ]


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_replay_equals_stored_after_1000_random_events(with_store: Any, seed: int) -> None:
    """1,000 random judgments, failed checks and bonuses: verify finds no difference."""
    steps = random_steps(seed, 1000)
    agent = f"h{next(AGENTS)}"

    async def body(store: Store) -> None:
        oracle = Oracle(store)
        sentinel = Sentinel(oracle, seed=0)
        judged: list[str] = []
        checked: set[str] = set()
        bonuses = 0
        for n, (kind, task_type, score, success, retries) in enumerate(steps):
            if kind == "judge" or not judged:
                contract = f"c{n}"
                await oracle.submit_for_judgment(
                    JudgmentRequest(
                        agent_id=agent, contract_id=contract, task_type=task_type, score=score,
                        success=success, retries=retries, cost=0.01, budget=0.02 if n % 2 else None,
                        new_agent=True,  # a new agent per example, on one store
                    )
                )  # fmt: skip
                judged.append(contract)
            elif kind == "fail_check":
                contract = judged[n % len(judged)]
                await sentinel.record_validation(agent, contract, passed=False)
                checked.add(contract)
            else:
                await oracle.award_xp(agent, "bonus", n % 40, f"b{n}")
                bonuses += 1
        report = await verify_store(store, OracleRules())
        assert report.differences == {}
        assert len(await store.events(agent)) == len(judged) + len(checked) + bonuses

    with_store(body)


def test_verify_reports_a_tampered_profile_by_field(tmp_path: Path) -> None:
    """Raising an agent's XP behind the Oracle's back is reported as xp: (stored, replayed)."""
    db = tmp_path / "t.db"

    async def main() -> None:
        store = await open_store(f"sqlite:///{db}")
        oracle = Oracle(store)
        for i in range(3):
            await oracle.submit_for_judgment(
                JudgmentRequest(agent_id="a1", contract_id=f"c{i}", score=9.0)
            )
        honest = (await oracle.get_profile("a1")).xp
        raw = sqlite3.connect(db)
        tampered = (await oracle.get_profile("a1")).model_copy(update={"xp": 9999})
        raw.execute(
            "UPDATE agent_profiles SET profile_json = ? WHERE id = 'a1'",
            (tampered.model_dump_json(),),
        )
        raw.commit()
        raw.close()
        report = await verify_store(store, OracleRules())
        assert not report.ok
        assert report.differences["a1"]["xp"] == (9999, honest)
        await store.close()

    asyncio.run(main())
