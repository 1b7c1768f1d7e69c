"""The XP rules the dashboard's banner, the demo's note and the docs state are the XP the
code awards: a passed gateway check, a failed one and a judged task, through the real
service path (the gateway in-process in front of the local providers, its judge held by
the test, the Oracle on a memory store). Each sentence is read from its file, so a doc
that drifts from the code fails here."""

from __future__ import annotations

import re
from pathlib import Path

import openai
import pytest

from agentladder.demo import DemoResult, ladder_note
from agentladder.services.container import Services
from agentladder.services.oracle.models import JudgmentRequest
from tests.gateway.judging import Judging, gateway_config
from tests.gateway.provider import Providers
from tests.gateway.test_gateway_checks import ask, run, settled

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' API key variables."""
    monkeypatch.setenv("GW_KEY_ALPHA", "sk-alpha-secret")
    monkeypatch.setenv("GW_KEY_BRAVO", "sk-bravo-secret")


def flat(text: str) -> str:
    """``text`` with every run of whitespace one space."""
    return " ".join(text.split())


def stated(path: str, pattern: str) -> tuple[int, ...]:
    """The numbers ``pattern`` captures in the file at ``path`` (whitespace flattened);
    the sentence must be there."""
    found = re.search(pattern, flat((ROOT / path).read_text(encoding="utf-8")))
    assert found is not None, f"{path}: no sentence matching {pattern!r}"
    return tuple(int(group) for group in found.groups())


LADDER = r"every successful judged task pays at least (\d+) XP, a failed one (\d+) XP"


def the_rules() -> dict[str, tuple[int, ...]]:
    """Each place that states the XP of success and failure, and the numbers it states."""
    demo = DemoResult(db=Path("demo.db"), deliberations=0, stats={}, leaderboard=[],
                      by_task_type={})  # fmt: skip
    note = re.search(LADDER, flat(ladder_note(demo)))
    assert note is not None, "the demo's note states no XP rule"
    return {
        "banner": stated("src/agentladder/api/templates/index.html", LADDER),
        "dashboard.md": stated("docs/dashboard.md", LADDER),
        "demo": tuple(int(group) for group in note.groups()),
        "gateway.md checks": stated(
            "docs/gateway.md", r"a passed check earns the task's XP \(at least (\d+) XP"
            r"[^)]*\), a failed check pays (\d+) XP",
        ),
        "gateway.md failed": (
            10, *stated("docs/gateway.md", r"a failed check is a failed task and pays (\d+) XP")
        ),
        "oracle.md": (10, *stated("docs/oracle.md", r"\(a failed one (\d+) XP\)")),
    }  # fmt: skip


async def xp(services: Services, agent: str) -> int:
    """The agent's XP now."""
    return (await services.oracle.get_profile(agent)).xp


def test_the_banner_and_the_docs_state_the_xp_the_code_awards(providers: Providers) -> None:
    """A rookie's answer is checked (rate 1): judged 9 at audit (pass score 7) it passes
    and earns at least what the banner says a successful task pays; judged 2 it fails and
    earns what the docs say a failure pays (0). A judged task with nothing but its
    completion (score 6, a retry, no budget) earns exactly the stated least."""
    rules = the_rules()
    least = {numbers[0] for numbers in rules.values()}
    failure = {numbers[1] for numbers in rules.values()}
    assert least == {10}, rules
    assert failure == {0}, rules

    async def body(client: openai.AsyncOpenAI, services: Services, judging: Judging) -> None:
        judging.score = 9.0
        assert (await ask(client, "bravo"))["x-agentladder-check"] == "yes"
        await settled(services, "passed", 1, agent="bravo")
        passed = await xp(services, "bravo")
        judging.score = 2.0
        assert (await ask(client, "alpha"))["x-agentladder-check"] == "yes"
        await settled(services, "failed", 1, agent="alpha")
        failed = await xp(services, "alpha")
        result = await services.oracle.submit_for_judgment(
            JudgmentRequest(
                agent_id="alpha", contract_id="plain", task_type="audit", score=6.0, retries=1
            )
        )
        assert passed >= min(least), rules
        assert failed == min(failure) == 0
        assert result.xp_awarded == min(least)
        assert [line.event for line in result.breakdown] == ["task_completed"]

    run(gateway_config(providers.base_url), body, Judging())
