"""Checks by earned trust: which gateway answers are judged, and the judging, off the
request path (docs/gateway.md, "Checks").

``decide`` asks the Sentinel (``should_validate`` at the agent's effective rate at the
task type, probation included) once the agent that answers is known, before the response
headers go: ``x-agentladder-check`` says what it drew. A request without a task type is
checked at ``gateway.judge.default_task_type`` (none: not checked); an answer by the
judge's own agent is never checked (a judge never judges its own agent).

``submit`` stores the check (``pending``: what the judge is shown) and queues it
(``queue.py``: kept in the store until done, retried, taken over after a crash; past
``queue_size``, backlogged in the store); a check that cannot be kept is not promised
(``x-agentladder-check: no``, counted ``dropped``), never the request failed. ``run`` judges one: it
asks the judge, then posts its score as an Oracle judgment under the request's contract
id, by ``gateway-judge:<name>``, with the task type, ``success`` when the score reaches
the task type's pass score; then the Sentinel's verdict on it (passed when successful).
So a failed check starts probation by the Oracle's own rules (a failed judgment), and
passed checks are the validations that clear it. A check run again (a retry, or taken
over from the store) first looks for what its earlier attempts stored: a verdict stored
ends it; a judgment stored is not asked of the judge again, only its verdict is recorded.

``GatewayTotals.checks`` counts, by (agent, task type, outcome): ``started``, then
``passed``, ``failed`` or ``error`` (given up: ``queue.py``); ``retried`` (an attempt
failed), ``recovered`` (taken over from the store), ``deferred`` (left in the store at a
stop), ``backlogged`` (written to the store only, the queue full), ``dropped`` (decided,
and not promised: nowhere to keep it) and ``own_agent``
(the judge's agent answered: no check). ``judge_cost_usd`` adds each judge call's cost at
the judge's prices, by judge name.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from agentladder.domain.agents import AgentConfig
from agentladder.errors import InvalidInput
from agentladder.providers.openai import OpenAIProvider, call_cost
from agentladder.services.gateway.judge import (
    JudgeSettings,
    answer_text,
    conversation_text,
    judge_messages,
    parse_verdict,
)
from agentladder.services.gateway.queue import CheckQueue, Entry
from agentladder.services.gateway.totals import GatewayTotals
from agentladder.services.gateway.upstream import Tally, answered, prompt_tokens
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.oracle.service import judgment_key
from agentladder.store.checks import PendingCheck

__all__ = ["Checks", "answer_of", "judge_of"]

log = logging.getLogger(__name__)

MAX_NOTES = 1000
MAX_REASON = 1000


def answer_of(body: bytes) -> str:
    """A chat completion's ``choices[0].message.content`` (empty when it has none)."""
    try:
        decoded: Any = json.loads(body)
        content = decoded["choices"][0]["message"]["content"]
    except (ValueError, RecursionError, LookupError, TypeError):
        return ""
    return content if isinstance(content, str) else ""


class Checks:
    """The Sentinel's decisions for gateway answers, and the judging of the checks."""

    def __init__(
        self, *, settings: JudgeSettings | None, sentinel: Sentinel, judge: OpenAIProvider | None,
        prices: AgentConfig | None, totals: GatewayTotals, owns_judge: bool = False,
        holder: str = "local", sweep_s: float = 30.0,
    ) -> None:  # fmt: skip
        self.settings = settings
        self.sentinel = sentinel
        self.judge = judge
        self.prices = prices
        self.totals = totals
        self._owns_judge = owns_judge  # a backend judge: closed in ``close``
        self.queue: CheckQueue | None = None
        if settings is not None:
            self.queue = CheckQueue(
                store=sentinel.oracle.store, holder=holder, settings=settings,
                counts=totals.checks, run=self.run, sweep_s=sweep_s,
            )  # fmt: skip

    @property
    def enabled(self) -> bool:
        """A judge is configured."""
        return self.settings is not None and self.judge is not None

    def task_type(self, requested: str | None) -> str | None:
        """The task type a request is checked at (and recorded at, for feedback and
        savings): its own, else the judge's default (none without a judge)."""
        if self.settings is None:
            return requested
        return requested or self.settings.default_task_type

    async def decide(self, agent_id: str, task_type: str | None) -> bool:
        """Whether the answer of ``agent_id`` at ``task_type`` is checked (never raises: a
        Sentinel that cannot decide now, e.g. its store unreachable, is a ``no``)."""
        if self.settings is None or task_type is None:
            return False
        if agent_id == self.settings.agent:
            self.totals.checks[agent_id, task_type, "own_agent"] += 1
            return False
        try:
            decision = await self.sentinel.should_validate(agent_id, task_type)
        except Exception as error:  # the request is never the check's to fail
            log.warning("gateway check of %s not decided (not checked): %s", agent_id, error)
            return False
        return decision.validate_output

    def pending(
        self, contract_id: str, agent_id: str, task_type: str, messages: Sequence[object],
        at: float, answer: str,
    ) -> PendingCheck:  # fmt: skip
        """The check of an answer, as it is stored: what the judge is shown."""
        return PendingCheck(
            contract_id=contract_id, agent_id=agent_id, task_type=task_type,
            conversation=conversation_text(messages), answer=answer_text(answer), at=at,
            owner=self.queue.holder if self.queue is not None else "local", due=at,
        )  # fmt: skip

    async def submit(self, check: PendingCheck, promised: bool = False) -> bool:
        """Store and queue ``check`` for the judge (``queue.py``); whether it will run: a
        check that cannot be kept is dropped (counted), unless it was ``promised``."""
        if self.queue is None or not await self.queue.add(check, promised):
            self.dropped(check.agent_id, check.task_type)
            return False
        return True

    def promise(self, agent_id: str, task_type: str) -> bool:
        """Hold a place for a stream's check, stored at its end; False (counted
        ``dropped``) when none can be kept: the caller is then told ``no``."""
        if self.queue is not None and self.queue.promise():
            return True
        self.dropped(agent_id, task_type)
        return False

    def dropped(self, agent_id: str, task_type: str) -> None:
        """A check that was decided and will not run."""
        self.totals.checks[agent_id, task_type, "dropped"] += 1

    def start(self) -> None:
        """Run the queue's workers, and take over the stored checks now and every while."""
        if self.queue is not None:
            self.queue.start()

    async def run(self, entry: Entry) -> bool:
        """Judge ``entry``'s check and store its judgment and verdict (what an earlier
        attempt stored is not done again); whether it passed. Raises when an attempt
        failed (``queue.py`` retries it)."""
        assert self.settings is not None
        check = entry.check
        agent, contract = check.agent_id, check.contract_id
        judged = None
        if entry.recovered or check.attempts:
            store = self.sentinel.oracle.store
            verdict = await store.get_event(agent, f"validation:{contract}")
            if verdict is not None:
                return bool(verdict.payload["passed"])
            judged = await store.get_event(agent, judgment_key(contract))
        if judged is not None:
            score, passed = float(judged.payload["score"]), bool(judged.payload["success"])
        else:
            if check.score is None:
                score, reason = await self._ask(check)
                check = check.model_copy(update={"score": score, "reason": reason[:MAX_REASON]})
                entry.check = check  # kept with a retry: the judge is not asked again
            score = float(check.score or 0.0)
            passed = score >= self.settings.pass_score_for(check.task_type)
            await self.sentinel.oracle.submit_for_judgment(
                JudgmentRequest(
                    agent_id=agent, contract_id=contract, task_type=check.task_type,
                    score=score, success=passed, judge=self.settings.judge_name,
                    observed_at=datetime.fromtimestamp(check.at, UTC),
                )
            )  # fmt: skip
        reason = check.reason if check.reason is not None else "(its reason was not kept)"
        notes = f"{self.settings.judge_name} scored {score:g}: {reason}"[:MAX_NOTES]
        # the verdict is the judge's score against the pass score: its judgment is the answer's
        # one observation by that judge (docs/skill.md, "One answer, one observation")
        await self.sentinel.record_validation(agent, contract, passed, notes, evidence=False)
        return passed

    async def _ask(self, check: PendingCheck) -> tuple[float, str]:
        """The judge's score and reason (``ProviderError`` when it fails or answers what is
        not a verdict); its cost counted whenever it answered."""
        assert self.settings is not None
        assert self.judge is not None
        messages = judge_messages(
            self.settings.rubric_for(check.task_type), check.task_type, check.conversation,
            check.answer,
        )  # fmt: skip
        payload: dict[str, object] = {
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.judge.settings.max_tokens,
            "response_format": {"type": "json_object"},
        }
        tally = Tally(prompt=prompt_tokens(messages))
        status, body, retry_after = await self.judge.relay(payload)
        answered(status, body, retry_after, tally)
        if self.prices is not None:
            cost = call_cost(self.prices, tally.usage())
            spent = self.totals.judge_cost_usd
            spent[self.settings.judge_name] = spent.get(self.settings.judge_name, 0.0) + cost
        return parse_verdict(body)

    async def close(self, grace_s: float) -> int:
        """Let the queued checks finish within ``grace_s`` seconds; the others stay in the
        store for the next start (``queue.py``). How many did not finish."""
        try:
            return 0 if self.queue is None else await self.queue.close(grace_s)
        finally:
            if self._owns_judge and self.judge is not None:
                await self.judge.aclose()


def judge_of(
    settings: JudgeSettings | None,
    agents: Mapping[str, AgentConfig],
    providers: Mapping[str, object],
) -> tuple[OpenAIProvider | None, AgentConfig | None, bool]:
    """The judge's provider, the prices it is paid at, and whether this built the provider
    (then the caller closes it)."""
    if settings is None:
        return None, None, False
    if settings.agent is not None:
        provider = providers.get(settings.agent)
        config = agents.get(settings.agent)
        if not isinstance(provider, OpenAIProvider) or config is None:
            raise InvalidInput(
                "gateway.judge.agent", settings.agent,
                "must name an agent of the config with an OpenAI-compatible backend (not remote)",
            )  # fmt: skip
        return provider, config, False
    assert settings.backend is not None
    prices = AgentConfig(
        name="gateway-judge", model_name=settings.backend.model or "",
        input_price_per_mtok=settings.input_price_per_mtok,
        output_price_per_mtok=settings.output_price_per_mtok,
    )  # fmt: skip
    return OpenAIProvider(prices, settings.backend), prices, True
