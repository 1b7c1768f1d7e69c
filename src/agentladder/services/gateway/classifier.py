"""``Classifier``: the task type of a routed request that names none (docs/gateway.md,
"Requests without a task type").

In order: the first of ``gateway.classify.rules`` that matches the last user message
(``rule``); else, with ``agent`` configured, that agent asked to name one of the task
types (``agent``); else ``default`` (``default``); else none (``failed``: the request is
routed at the agents' overall skill, as before classification existed). An agent that
fails (an error status, a timeout of ``timeout_s``, a refused connection) or whose reply
is not exactly one of the task types gives nothing: the default is used.

The agent's call is a provider call of that agent: counted in ``/metrics`` under call
``classify`` (latency, errors by kind, tokens and cost at the agent's prices), and its cost
in ``GatewayTotals.classifier_cost_usd``; the gateway charges it to the caller (its
budget's spend). It does not enter the agent's health or stats: it is not routed work.
Each classification is counted by task type and outcome (``GatewayTotals.classifications``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from agentladder.domain.agents import AgentConfig
from agentladder.errors import ProviderError
from agentladder.providers.isolated import isolated
from agentladder.providers.openai import call_cost
from agentladder.services.deliberations.calls import ProviderCalls, error_kind
from agentladder.services.gateway.classify import (
    ClassifySettings,
    classifier_messages,
    last_user_text,
    parse_task_type,
    rule_hit,
)
from agentladder.services.gateway.totals import GatewayTotals
from agentladder.services.gateway.upstream import Tally, answered, prompt_tokens

__all__ = ["CALL", "Asker", "Classified", "Classifier"]

log = logging.getLogger(__name__)

CALL = "classify"
"""The ``call`` label of the classifier agent's calls in ``/metrics``."""


class Asker(Protocol):
    """What the classifier needs of its agent's provider (``OpenAIProvider`` is one)."""

    async def relay(self, payload: Mapping[str, object]) -> tuple[int, bytes, float | None]:
        """POST a chat request: the status, the body and the Retry-After in seconds."""


@dataclass(frozen=True, slots=True)
class Classified:
    """The task type found (None: none) and how: ``rule``, ``agent``, ``default`` or
    ``failed``; ``cost_usd``: the agent's call, when it was asked, and ``waited_s`` the
    time it took (a provider's time, not the gateway's own)."""

    task_type: str | None
    how: str
    cost_usd: float | None = None
    waited_s: float = 0.0


class Classifier:
    """Rules, then the agent, then the default; see the module."""

    def __init__(
        self, settings: ClassifySettings, *, asker: Asker | None, prices: AgentConfig | None,
        calls: ProviderCalls, totals: GatewayTotals,
    ) -> None:  # fmt: skip
        self.settings = settings
        self.asker = asker
        self.prices = prices
        self.calls = calls
        self.totals = totals

    async def classify(self, messages: Sequence[object]) -> Classified:
        """The task type of a request of ``messages``, counted."""
        settings = self.settings
        text = last_user_text(messages, settings.max_chars)
        found = rule_hit(settings.rules, text)
        if found is not None:
            return self._counted(Classified(found, "rule"))
        cost, waited = None, 0.0
        if self.asker is not None and text.strip():
            started = time.perf_counter()
            said, cost = await self._ask(text[: settings.agent_chars])
            waited = time.perf_counter() - started
            if said is not None:
                return self._counted(Classified(said, "agent", cost, waited))
        if settings.default is not None:
            return self._counted(Classified(settings.default, "default", cost, waited))
        return self._counted(Classified(None, "failed", cost, waited))

    def _counted(self, classified: Classified) -> Classified:
        self.totals.classifications[classified.task_type or "", classified.how] += 1
        return classified

    async def _ask(self, text: str) -> tuple[str | None, float]:
        """The agent's task type (None when it failed or named none) and its call's cost."""
        assert self.asker is not None
        agent = self.settings.agent or ""
        choices = self.settings.choices
        messages = classifier_messages(text, choices)
        payload: dict[str, object] = {
            "messages": messages, "temperature": 0, "max_tokens": self.settings.max_tokens,
        }  # fmt: skip
        tally = Tally(prompt=prompt_tokens(messages))
        started = time.perf_counter()
        cost = 0.0
        try:
            status, body, retry_after = await isolated(
                self.asker.relay(payload), self.settings.timeout_s
            )
            answered(status, body, retry_after, tally)
            cost = self._spent(agent, tally)
            found = parse_task_type(body, choices)
        except (ProviderError, TimeoutError) as error:
            self.calls.observe(agent, CALL, time.perf_counter() - started, error_kind(error))
            log.warning("the classifier %s named no task type (the default is used): %s",
                        agent, error)  # fmt: skip
            return None, cost
        self.calls.observe(agent, CALL, time.perf_counter() - started, None)
        return found, cost

    def _spent(self, agent: str, tally: Tally) -> float:
        """An answered call's tokens and cost, at the agent's prices."""
        usage = tally.usage()
        cost = 0.0 if self.prices is None else call_cost(self.prices, usage)
        self.calls.spend(agent, usage.input_tokens, usage.output_tokens, cost)
        spent = self.totals.classifier_cost_usd
        spent[agent] = spent.get(agent, 0.0) + cost
        return cost
