"""``AsyncLadder``: the asyncio client, with the methods of ``Ladder`` (``sync.py``)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack

import httpx
from pydantic import BaseModel

from agentladder.client import calls
from agentladder.client.core import (
    MAX_ANSWER_BYTES,
    MAX_ERROR_BYTES,
    Body,
    Call,
    Caps,
    Retry,
    chunks,
    headers,
    no_answer,
    parse,
)
from agentladder.client.models import (
    BATCH_MAX,
    Accepted,
    AgentConfig,
    AgentFields,
    AgentOut,
    AgentProfile,
    AgentSkillsOut,
    BatchItemOut,
    CallFields,
    CallOutcomeIn,
    CallRecordedOut,
    DeliberationOut,
    ExternalDeliberation,
    ExternalFields,
    JudgesOut,
    JudgmentFields,
    JudgmentRequest,
    JudgmentResult,
    RouteFields,
    RouteOut,
    RouteRequest,
    SamplingDecision,
    SavingsReport,
    SkillBoardOut,
    SkillFitOut,
    Validation,
    ValidationResult,
)

__all__ = ["AsyncLadder"]

M = TypeVar("M", bound=BaseModel)


class AsyncLadder:
    """A client of one agentladder server: ``AsyncLadder("http://127.0.0.1:8000", token=...)``.

    ``transport``: httpx's (``httpx.MockTransport`` in tests); ``timeout``: seconds per
    request; ``retries`` and ``max_wait``: the tries after a 503, a 429 or no answer, and
    the seconds they may wait in all; ``max_answer_bytes`` and ``max_error_bytes``: the
    most of an answer's body read, a success's (past it: ``AnswerTooLarge``) and an
    error's (the rest left unread) (``core.py``). Use it as an async context manager, or
    await ``close``."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        max_wait: float = 30.0,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        max_error_bytes: int = MAX_ERROR_BYTES,
    ) -> None:
        self.retries = retries
        self.max_wait = max_wait
        self.caps = Caps(max_answer_bytes, max_error_bytes)
        self._tokenless = token is None
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        self._http = httpx.AsyncClient(
            base_url=url, headers=headers(token), timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def _send(self, call: Call[M]) -> M:
        budget = Retry(self.retries, self.max_wait)
        while True:
            try:
                async with self._http.stream(
                    call.method, call.path, content=call.content(), params=call.query(),
                    headers={"content-type": "application/json"} if call.body else None,
                ) as response:  # fmt: skip
                    content = await self._read(call, response)
                    wait = budget.delay(response)
                    if wait is None:
                        return parse(call, response, content, tokenless=self._tokenless)
            except httpx.TransportError as error:
                wait = budget.delay(None)
                if wait is None:
                    raise no_answer(call, error) from error
            await self._sleep(wait)

    async def _read(self, call: Call[M], response: httpx.Response) -> bytes:
        """The body, read up to its cap (``core.Body``); closing the response then
        leaves the rest unread (the connection is dropped, not drained)."""
        body = Body(call, response, self.caps)
        async for piece in response.aiter_bytes():
            if body.add(piece):
                break
        return body.content()

    async def judge(
        self,
        judgment: JudgmentRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Unpack[JudgmentFields],
    ) -> JudgmentResult:
        """Submit one judged task: ``judge(agent_id=..., contract_id=..., score=...)``, or a
        ``JudgmentRequest`` or a dict of its fields; the same contract again answers the
        first award."""
        return await self._send(calls.judge(judgment, fields))

    async def judge_many(
        self,
        judgments: Iterable[JudgmentRequest | Mapping[str, Any]],
        *,
        chunk: int = BATCH_MAX,
    ) -> list[BatchItemOut]:
        """Submit judgments (each a ``JudgmentRequest`` or a dict of its fields) in batches
        of ``chunk`` (at most the API's 1,000): one result per judgment, in order
        (``imported``, ``duplicate``, ``conflict`` or ``refused``). A dict its model
        refuses raises ``InvalidInput`` (``judgments.<index>.<field>``) before its batch
        is sent; the batches before it were sent."""
        results: list[BatchItemOut] = []
        for part in chunks(judgments, min(chunk, BATCH_MAX)):
            results.extend((await self._send(calls.batch(part, len(results)))).results)
        return results

    async def report(
        self,
        deliberation: ExternalDeliberation | Mapping[str, Any] | None = None,
        /,
        **fields: Unpack[ExternalFields],
    ) -> Accepted:
        """Report a deliberation run elsewhere (with raw peer scores), ranked once per id:
        an ``ExternalDeliberation``, a dict of its fields, or its keywords."""
        return await self._send(calls.report(deliberation, fields))

    async def should_validate(
        self, agent_id: str, *, task_type: str | None = None, force: bool = False
    ) -> SamplingDecision:
        """The Sentinel's decision: check this output of the agent now?"""
        return await self._send(calls.check(agent_id, task_type, force))

    async def record_validation(
        self, agent_id: str, contract_id: str, *, passed: bool, notes: str = ""
    ) -> ValidationResult:
        """Record the verdict on a judged task (once per contract)."""
        return await self._send(calls.verdict(agent_id, contract_id, passed, notes))

    async def validate(
        self,
        agent_id: str,
        contract_id: str,
        check: Callable[[], bool | Awaitable[bool]],
        *,
        task_type: str | None = None,
        force: bool = False,
        notes: str = "",
    ) -> Validation:
        """Ask the Sentinel whether to check this judged output; if so, run ``check``
        (True: it passed; a coroutine function too) and record the verdict."""
        decision = await self.should_validate(agent_id, task_type=task_type, force=force)
        if not decision.validate_output:
            return Validation(decision=decision)
        passed = check()
        if inspect.isawaitable(passed):
            passed = await passed
        result = await self.record_validation(agent_id, contract_id, passed=passed, notes=notes)
        return Validation(decision=decision, result=result)

    async def skills(
        self, task_type: str | None = None, *, limit: int = 100, fresh: bool = False
    ) -> SkillBoardOut:
        """The skill board, best first: overall, or of one task type, with how fresh it is
        (``fitted_at``, ``pending``); ``fresh``: fitted first (an admin's token)."""
        return await self._send(calls.skills(task_type, limit, fresh))

    async def agent_skills(self, agent_id: str, *, fresh: bool = False) -> AgentSkillsOut:
        """One agent's skill, overall and per task type, with how fresh it is; ``fresh``:
        fitted first (an admin's token)."""
        return await self._send(calls.agent_skills(agent_id, fresh))

    async def fit_skills(self) -> SkillFitOut:
        """Fit the skill log now when evidence awaits the fit (an admin's token); a fit
        already running is waited for, and shared."""
        return await self._send(calls.fit_skills())

    async def skill_judges(self) -> JudgesOut:
        """Every source of scores the skill fit knows, most evidence first."""
        return await self._send(calls.skill_judges())

    async def record_call(
        self,
        agent_id: str,
        call: CallOutcomeIn | Mapping[str, Any] | None = None,
        /,
        **fields: Unpack[CallFields],
    ) -> CallRecordedOut:
        """Record the outcome of a call to ``agent_id`` made elsewhere (its health and
        stats, as the gateway's own calls feed them): ``record_call("a", latency_ms=80,
        outcome="ok", cost_usd=0.002)``; a ``bad_request`` is counted in neither."""
        return await self._send(calls.record_call(agent_id, call, fields))

    async def route(
        self,
        request: RouteRequest | Mapping[str, Any] | None = None,
        /,
        **fields: Unpack[RouteFields],
    ) -> RouteOut:
        """The agents routing would choose for a task, with why (nothing is run):
        ``route(task_type="code")`` (one agent; ``count=2`` for a deliberation's), or a
        ``RouteRequest`` or a dict of its fields."""
        return await self._send(calls.route(request, fields))

    async def savings(self, *, window_s: float | None = None, seed: int = 0) -> SavingsReport:
        """Whether routing paid on the gateway's traffic over the last ``window_s`` seconds
        (none: the server's default, 7 days): cost and judged quality against always using
        the best single agent, per task type and overall, with 95% intervals."""
        return await self._send(calls.savings(window_s, seed))

    async def profile(self, agent_id: str) -> AgentProfile:
        """The agent's Oracle profile: XP, level, specializations, achievements."""
        return await self._send(calls.profile(agent_id))

    async def heartbeat(
        self, agent: AgentConfig | Mapping[str, Any] | None = None, /, **fields: Unpack[AgentFields]
    ) -> AgentOut:
        """Declare the agent alive, with its whole declaration: an ``AgentConfig``, a dict
        of its fields, or its keywords (``heartbeat(name="ext", provider_id="acme")``)."""
        return await self._send(calls.heartbeat(agent, fields))

    async def deliberation(self, deliberation_id: str) -> DeliberationOut:
        """A deliberation's record."""
        return await self._send(calls.deliberation(deliberation_id))
