"""Checks by earned trust: which gateway answers are judged, and the judging, off the
request path (docs/gateway.md, "Checks").

``decide`` asks the Sentinel (``should_validate`` at the agent's effective rate at the
task type, probation included) once the agent that answers is known, before the response
headers go: ``x-agentladder-check`` says what it drew. A request without a task type is
checked at ``gateway.judge.default_task_type`` (none: not checked); an answer by the
judge's own agent is never checked (a judge never judges its own agent).

``submit`` puts a check in a bounded queue (``queue_size``) and returns at once: a full
queue drops the check (counted ``dropped``), never the request. ``workers`` tasks take
the checks in turn: each asks the judge (``judge.py``), then posts its score as an Oracle
judgment under the request's contract id, by ``gateway-judge:<name>``, with the task type,
``success`` when the score reaches the task type's pass score; then the Sentinel's verdict
on it (passed when successful). So a failed check starts probation by the Oracle's own
rules (a failed judgment), and passed checks are the validations that clear it.

``GatewayTotals.checks`` counts, by (agent, task type, outcome): ``started``, then
``passed``, ``failed`` or ``error`` (the judge or the Oracle failed); ``dropped`` (the
queue was full, the answer never came whole, or the service stopped first) and
``own_agent`` (the judge's agent answered: no check). ``judge_cost_usd`` adds each judge
call's cost at the judge's prices, by judge name.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentladder.domain.agents import AgentConfig
from agentladder.errors import AgentladderError, InvalidInput
from agentladder.providers.openai import OpenAIProvider, call_cost
from agentladder.services.gateway.judge import JudgeSettings, judge_messages, parse_verdict
from agentladder.services.gateway.upstream import Tally, answered, prompt_tokens
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.sentinel import Sentinel

if TYPE_CHECKING:
    from agentladder.services.gateway.service import GatewayTotals

__all__ = ["Check", "Checks", "judge_of"]

log = logging.getLogger(__name__)

MAX_NOTES = 1000


@dataclass(frozen=True, slots=True, eq=False)
class Check:
    """One answer to judge: the request's contract, the agent and task type, the
    conversation, and the answer (``text``, or the raw chat-completions ``body``)."""

    contract_id: str
    agent_id: str
    task_type: str
    messages: Sequence[object]
    at: float
    text: str | None = None
    body: bytes = b""

    def answer(self) -> str:
        """The answer's text: ``text``, else ``choices[0].message.content`` of ``body``."""
        if self.text is not None:
            return self.text
        try:
            decoded: Any = json.loads(self.body)
            content = decoded["choices"][0]["message"]["content"]
        except (ValueError, RecursionError, LookupError, TypeError):
            return ""
        return content if isinstance(content, str) else ""


class Checks:
    """The Sentinel's decisions for gateway answers, and the judge's queue."""

    def __init__(
        self, *, settings: JudgeSettings | None, sentinel: Sentinel, judge: OpenAIProvider | None,
        prices: AgentConfig | None, totals: GatewayTotals, owns_judge: bool = False,
    ) -> None:  # fmt: skip
        self.settings = settings
        self.sentinel = sentinel
        self.judge = judge
        self.prices = prices
        self.totals = totals
        self._owns_judge = owns_judge  # a backend judge: closed in ``close``
        self._queue: asyncio.Queue[Check] | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._running: set[Check] = set()

    @property
    def enabled(self) -> bool:
        """A judge is configured."""
        return self.settings is not None and self.judge is not None

    def task_type(self, requested: str | None) -> str | None:
        """The task type a request is checked at: its own, else the judge's default."""
        if self.settings is None:
            return None
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

    def submit(self, check: Check) -> None:
        """Queue ``check`` for the judge; a full queue drops it (counted)."""
        if self._queue is None:
            self._start()
        assert self._queue is not None
        try:
            self._queue.put_nowait(check)
        except asyncio.QueueFull:
            self.dropped(check.agent_id, check.task_type)

    def dropped(self, agent_id: str, task_type: str) -> None:
        """A check that was decided and will not run."""
        self.totals.checks[agent_id, task_type, "dropped"] += 1

    def _start(self) -> None:
        assert self.settings is not None
        self._queue = asyncio.Queue(maxsize=self.settings.queue_size)
        self._workers = [asyncio.ensure_future(self._work()) for _ in range(self.settings.workers)]

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            check = await self._queue.get()
            try:
                self._running.add(check)
                await self.run(check)
            except asyncio.CancelledError:  # the service stops: this check is dropped
                self.dropped(check.agent_id, check.task_type)
                raise
            except Exception:  # one check's failure is counted; the worker goes on
                log.exception("gateway check %s failed", check.contract_id)
            finally:
                self._running.discard(check)
                self._queue.task_done()

    async def run(self, check: Check) -> None:
        """Judge ``check`` and post its judgment and verdict; counted by outcome."""
        assert self.settings is not None
        assert self.judge is not None
        key = (check.agent_id, check.task_type)
        self.totals.checks[(*key, "started")] += 1
        try:
            score, reason = await self._ask(check)
            passed = score >= self.settings.pass_score_for(check.task_type)
            oracle = self.sentinel.oracle
            await oracle.submit_for_judgment(
                JudgmentRequest(
                    agent_id=check.agent_id, contract_id=check.contract_id,
                    task_type=check.task_type, score=score, success=passed,
                    judge=self.settings.judge_name,
                    observed_at=datetime.fromtimestamp(check.at, UTC),
                )
            )  # fmt: skip
            notes = f"{self.settings.judge_name} scored {score:g}: {reason}"[:MAX_NOTES]
            await self.sentinel.record_validation(check.agent_id, check.contract_id, passed, notes)
        except (AgentladderError, ValueError) as error:
            log.warning("gateway check %s of %s: %s", check.contract_id, check.agent_id, error)
            self.totals.checks[(*key, "error")] += 1
            return
        self.totals.checks[(*key, "passed" if passed else "failed")] += 1

    async def _ask(self, check: Check) -> tuple[float, str]:
        """The judge's score and reason (``ProviderError`` when it fails or answers what is
        not a verdict); its cost counted whenever it answered."""
        assert self.settings is not None
        assert self.judge is not None
        messages = judge_messages(
            self.settings.rubric_for(check.task_type), check.task_type, check.messages,
            check.answer(),
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
        """Finish the queued checks within ``grace_s`` seconds; those left (queued or
        being judged) are counted dropped. How many were dropped."""
        try:
            return await self._drain(grace_s)
        finally:
            if self._owns_judge and self.judge is not None:
                await self.judge.aclose()

    async def _drain(self, grace_s: float) -> int:
        if self._queue is None:
            return 0
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_s):
                await self._queue.join()
        running = len(self._running)  # each counts itself dropped when cancelled
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        queued = 0
        while not self._queue.empty():
            check = self._queue.get_nowait()
            self.dropped(check.agent_id, check.task_type)
            queued += 1
        if running + queued:
            log.warning("stopping: %d gateway check(s) not finished, dropped", running + queued)
        self._workers, self._queue = [], None
        return running + queued


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
