"""A fleet judged pass or fail only (no judgment with a score, so no source of scores at
all) is fitted: the fit once raised ``IndexError`` on the empty per-source arrays, every
pass, so such a fleet's skills were never fitted (found by the long stateful API run)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from agentladder.domain.rules import OracleRules
from agentladder.domain.skill.rules import SkillRules
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.skill.replay import verify_skills
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store

PASS_RATES = {"steady": 0.9, "middling": 0.5, "shaky": 0.1}


@pytest.mark.parametrize("exact_limit", [3000, 0], ids=["exact", "large"])
def test_a_fleet_judged_pass_or_fail_only_is_fitted(with_store: Any, exact_limit: int) -> None:
    """60 outcomes without scores over three agents and two task types: the fit runs and
    commits, every estimate is finite, the agents are ordered by their pass rates, and
    replaying the log gives the stored states; with the exact solver and the large one."""

    async def body(store: Store) -> None:
        rules = SkillRules(exact_limit=exact_limit)
        skill = SkillService(store, rules)
        oracle = Oracle(store, OracleRules(accept_unregistered=True), skill=skill)
        rng = random.Random(7)
        for number in range(60):
            agent = list(PASS_RATES)[number % 3]
            await oracle.submit_for_judgment(
                JudgmentRequest(
                    agent_id=agent,
                    contract_id=f"c-{number}",
                    task_type=("code", "review")[number % 2],
                    success=rng.random() < PASS_RATES[agent],
                )
            )
        report = await skill.fit()
        assert report.ran
        assert report.events == 60
        overall = {agent: (await skill.of_agent(agent)).overall for agent in PASS_RATES}
        for agent, estimate in overall.items():
            assert estimate is not None, agent
            assert math.isfinite(estimate.skill), agent
        assert overall["steady"].skill > overall["middling"].skill > overall["shaky"].skill
        checked = await verify_skills(store, rules)
        assert checked.differences == []
        assert checked.agents_checked == 3

    with_store(body)
