"""``Classifier`` (``services/gateway/classifier.py``) with a fake agent behind its
``Asker`` interface: rules first, then the agent, then the default, each counted, the
agent's calls counted as provider calls ``classify`` with their cost."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError
from agentladder.services.deliberations.calls import ProviderCalls
from agentladder.services.gateway.classifier import CALL, Classified, Classifier
from agentladder.services.gateway.classify import ClassifySettings
from agentladder.services.gateway.totals import GatewayTotals

PRICES = AgentConfig(
    name="sorter", model_name="m", input_price_per_mtok=1.0, output_price_per_mtok=2.0
)
"""10 prompt and 2 completion tokens: 14 micro-dollars."""
COST = 14e-6


class FakeAgent:
    """Answers ``content`` (status ``status``), or raises ``error``, or waits ``delay_s``."""

    def __init__(
        self, content: str = "writing", status: int = 200, error: ProviderError | None = None,
        delay_s: float = 0.0,
    ) -> None:  # fmt: skip
        self.content, self.status, self.error, self.delay_s = content, status, error, delay_s
        self.asked: list[Mapping[str, object]] = []

    async def relay(self, payload: Mapping[str, object]) -> tuple[int, bytes, float | None]:
        self.asked.append(payload)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.error is not None:
            raise self.error
        if self.status >= 300:
            return self.status, b'{"error": {"message": "broken"}}', None
        body = {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }
        return 200, json.dumps(body).encode(), None


SETTINGS = ClassifySettings.model_validate(
    {"rules": [{"task_type": "code", "keywords": ["traceback"]}], "agent": "sorter",
     "task_types": ["writing", "code", "audit"], "default": "audit", "timeout_s": 0.2}
)  # fmt: skip


def run(
    agent: FakeAgent | None, text: str, settings: ClassifySettings = SETTINGS
) -> tuple[tuple[str | None, str, float | None], ProviderCalls, GatewayTotals]:
    """The task type, how and the cost the classifier finds for ``text``, its calls and
    totals; its time waiting for the agent is 0 when it was not asked."""
    calls, totals = ProviderCalls(), GatewayTotals()
    classifier = Classifier(settings, asker=agent, prices=PRICES, calls=calls, totals=totals)
    found: Classified = asyncio.run(classifier.classify([{"role": "user", "content": text}]))
    assert (found.waited_s > 0) == bool(agent is not None and agent.asked)
    return (found.task_type, found.how, found.cost_usd), calls, totals


def test_a_rule_that_matches_asks_no_agent() -> None:
    """A rule hit is ``rule``: the agent is not asked, nothing is spent."""
    agent = FakeAgent()
    found, calls, totals = run(agent, "a Traceback here")
    assert found == ("code", "rule", None)
    assert agent.asked == []
    assert totals.classifications == {("code", "rule"): 1}
    assert calls.latency == {}


def test_the_agent_names_the_type_and_its_call_is_counted() -> None:
    """No rule hit: the agent's answer is ``agent``; it was asked at temperature 0 with the
    allowed types; its call is a ``classify`` call of the agent with its tokens and cost."""
    agent = FakeAgent("Writing\n")
    found, calls, totals = run(agent, "a poem about spring")
    assert found == ("writing", "agent", COST)
    assert agent.asked[0]["temperature"] == 0
    assert agent.asked[0]["max_tokens"] == SETTINGS.max_tokens
    assert "Task types: writing, code, audit" in str(agent.asked[0]["messages"])
    assert calls.latency["sorter", CALL].counts != [0] * len(calls.latency["sorter", CALL].counts)
    assert calls.errors == {}
    assert calls.cost == {"sorter": COST}
    assert totals.classifier_cost_usd == {"sorter": COST}
    assert totals.classifications == {("writing", "agent"): 1}


def test_an_agent_that_fails_leaves_the_default() -> None:
    """A 500, a transport error, a timeout, an answer not listed: the default, the call
    counted failed by its kind; an answer that came is paid for all the same."""
    cases = [
        (FakeAgent(status=500), "http", 0.0),
        (FakeAgent(error=ProviderError("refused", "connection refused")), "refused", 0.0),
        (FakeAgent(delay_s=5.0), "timeout", 0.0),
        (FakeAgent("poetry"), "invalid", COST),
    ]
    for agent, kind, cost in cases:
        found, calls, totals = run(agent, "a poem about spring")
        assert found == ("audit", "default", cost), kind
        assert calls.errors == {("sorter", CALL, kind): 1}
        assert totals.classifications == {("audit", "default"): 1}


def test_without_a_default_nothing_found_is_failed() -> None:
    """No rule, no answer, no default: ``failed``, no task type (the overall skill)."""
    settings = SETTINGS.model_copy(update={"default": None})
    found, _, totals = run(FakeAgent("poetry"), "a poem", settings)
    assert found == (None, "failed", COST)
    assert totals.classifications == {("", "failed"): 1}


def test_a_request_without_user_text_is_not_sent_to_the_agent() -> None:
    """No user text to read: the agent is not asked; the default."""
    agent = FakeAgent()
    found, _, _ = run(agent, "   ")
    assert found == ("audit", "default", None)
    assert agent.asked == []
