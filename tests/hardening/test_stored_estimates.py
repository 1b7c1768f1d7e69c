"""A stored skill estimate past 10 (its clipped interval once inverted: low 10.0009 over
high 10.0) against a real `agentladder serve` on loopback: the board, the dashboard and
/healthz answer, and SIGTERM stops the server; before the fix the tier loop never ended
and a restart hung again on the same data."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

from agentladder.domain.skill import AgentSkill, FleetSkill, SkillRules
from agentladder.domain.skill.state import Estimate, new_skill
from agentladder.store.skills import SkillCommit, SkillEvent
from agentladder.store.url import open_store
from tests.served import start_server

CONFIG = """
agents:
  - name: sim_a
    backend: {kind: simulated, quality: 7.0}
"""


def _over_ten(name: str, mean: float, at: float) -> AgentSkill:
    """A state whose estimate lies past the scale's end with a tiny sd, observed at ``at``
    (now: inactivity does not widen it; taken when the test runs, not when the module is
    imported, which in a long suite is minutes before, enough to widen the interval)."""
    base = new_skill(name, SkillRules())
    estimate = Estimate(mean=mean, var=1e-6, n=40, at=at)
    return AgentSkill(
        agent_id=name, overall=estimate, evaluator=base.evaluator, types={"math": estimate}
    )


async def _seed(path: Path) -> None:
    at = time.time()
    store = await open_store(f"sqlite:///{path}")
    try:
        for n, (name, mean) in enumerate((("over", 10.01), ("steady", 7.0))):

            def fold(
                states: Mapping[str, AgentSkill], fleet: FleetSkill, name: str = name,
                mean: float = mean, key: str = f"seed:{n}",
            ) -> SkillCommit:  # fmt: skip
                event = SkillEvent(key=key, kind="judgment", payload="{}", payload_hash="h", at=at)
                return SkillCommit(event, {name: _over_ten(name, mean, at)}, None)

            await store.apply_skill(f"seed:{n}", [name], fold)
    finally:
        await store.close()


def test_a_stored_estimate_past_ten_does_not_hang_the_server(tmp_path: Path) -> None:
    """/skills (overall and per type), the dashboard and /healthz answer within seconds
    on a store holding an estimate past 10; the board reads it just under 10, with its
    interval within 9.85-10 (no sd is below ``skill.sd_floor``, 0.05) and not inverted;
    SIGTERM
    then stops the server gracefully (twice: the restart on the same data too)."""
    asyncio.run(_seed(tmp_path / "served.db"))
    for _ in range(2):
        server = start_server(tmp_path, CONFIG)
        try:
            with httpx.Client(timeout=5) as client:
                board = client.get(server.url("/skills"))
                assert board.status_code == 200, board.text
                typed = client.get(server.url("/skills"), params={"task_type": "math"})
                assert typed.status_code == 200, typed.text
                assert client.get(server.url("/dashboard")).status_code == 200
                assert client.get(server.url("/healthz")).status_code == 200
        finally:
            server.stop()
        entries = {e["agent_id"]: e for e in typed.json()["entries"]}
        over = entries["over"]
        assert 9.85 <= over["low"] <= over["skill"] <= over["high"] <= 10.0
        assert over["tier"] == 1
        assert entries["steady"]["tier"] == 2
