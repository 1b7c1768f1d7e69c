"""``Gateway``: one chat-completions request, from its ``model`` to an answer.

The request's ``model`` and headers say what it asks for (``choice.py``); a ``model``
that names nothing this server can ask is explained (``Gateway._unknown``): an agent
that exists elsewhere says what it is and why it cannot be called, any other name is
offered the closest it may use (did you mean). A routing that
names no task type gets one from ``gateway.classify`` when it is configured
(``classifier.py``: rules, an agent, a default; the agent's cost charged to the caller).
A routing asks the ``RoutingService`` for ``gateway.max_attempts`` agents, as
``POST /route`` does (same exclusions and reasons), among the agents this server can
forward to (an OpenAI-compatible backend) and that heartbeat now. The first is asked; on a provider
error or a timeout before any byte went to the caller, the next one; when every one
failed, ``AgentsFailed`` names them and why. A provider that refuses the request as
invalid (400, 413, 422: ``Rejected``) is not held against its agent's health; the next
one is asked (its context may be longer), and when every agent asked refused it,
``RequestRejected`` gives the caller the provider's status and error code. A direct
agent is asked alone, whatever its health (as ``agent_names`` in a deliberation), unless
its provider asked not to be called yet (Retry-After).

Each attempt is recorded as a deliberation's calls are: the provider totals of
``/metrics`` (call ``chat``), the agent's health (ok, degraded, down and its cooldowns),
its stats (``stats.py``), and, when it answered, its tokens and cost at its prices.

Every request gets a contract id (``gw-`` and 32 hex digits) and keeps its routing
decision (``Served``): the handle a check, a caller's feedback or a budget's charge
attaches to. Once the agent that answers is known, the answer is recorded for feedback
and routing's savings (``record.py``, ``feedback.py``: a stream's again at its end, with
its cost) and the Sentinel decides whether it is checked (``checks.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentladder.config import TokenSettings
from agentladder.domain.agents import AgentConfig, is_agent_name
from agentladder.domain.ranking import Submission
from agentladder.domain.routing.retry import agent_wait_s, retry_after_s
from agentladder.domain.routing.spec import Routing
from agentladder.domain.suggestions import closest, did_you_mean
from agentladder.errors import (
    AgentsFailed,
    InvalidInput,
    NoAgentQualifies,
    ProviderError,
    Rejected,
    RequestRejected,
    UnknownModel,
)
from agentladder.providers.base import Provider, Usage
from agentladder.providers.openai import OpenAIProvider, call_cost
from agentladder.services.deliberations.calls import ProviderCalls, error_kind
from agentladder.services.gateway.bills import Bill, billed, holding
from agentladder.services.gateway.budgets import Budgets
from agentladder.services.gateway.checks import Checks, answer_of
from agentladder.services.gateway.choice import ROUTE, ROUTE_PREFIX, Choice, choose
from agentladder.services.gateway.classifier import Classifier
from agentladder.services.gateway.feedback import Feedback
from agentladder.services.gateway.judge import UNTYPED_TASK_TYPE
from agentladder.services.gateway.record import costed, served_record
from agentladder.services.gateway.request_ids import client_request_id
from agentladder.services.gateway.said import said
from agentladder.services.gateway.settings import GatewaySettings
from agentladder.services.gateway.stats import StatsRecorder
from agentladder.services.gateway.totals import GatewayTotals
from agentladder.services.gateway.traffic import Traffic
from agentladder.services.gateway.upstream import Tally, answered, open_stream, request_tokens
from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.service import RoutingService
from agentladder.store.served import ServedRequest

__all__ = ["CALL", "Gateway", "Served", "new_contract_id"]

CALL = "chat"
"""The ``call`` label of the gateway's provider calls in ``/metrics``."""


CUT_NOTE = "the stream ended here"
"""What the judge is told after the text of a stream that did not come whole."""
CUT_WHY = {"cancelled": "the caller stopped reading", "broken": "the provider's stream broke"}


def new_contract_id() -> str:
    """A fresh contract id for one request."""
    return f"gw-{uuid.uuid4().hex}"


@dataclass
class Served:
    """A request answered: by whom, under which contract, after which failures, and the
    answer (``body``, or ``stream`` for ``stream: true``)."""

    contract_id: str
    agent_id: str
    choice: Choice
    routing: Routing | None
    failures: list[tuple[str, str]]
    body: bytes = b""
    stream: AsyncIterator[bytes] | None = None
    usage: Usage = field(default_factory=Usage)
    check: bool = False
    """Whether a check of this answer will run (``x-agentladder-check``)."""
    whole: Callable[[Tally], Awaitable[None]] | None = None
    """For a stream: awaited once it came whole, before its end goes to the caller (its
    check is stored and queued then)."""
    cut: Callable[[Tally, str], None] | None = None
    """For a stream: called when it broke or its caller went away, with the reason: its
    check is stored and queued in the background, on the text that went out."""
    provider_s: float = 0.0
    """Seconds spent waiting for providers before the answer (a stream: its first
    bytes) was ready, every attempt's (``traffic.py``)."""
    budget: dict[str, str] = field(default_factory=dict)
    """The caller's budget headers as its request's reservation found them."""
    tally: Tally = field(default_factory=Tally)
    """What the answering attempt used (a stream: what was relayed so far)."""
    record: ServedRequest | None = None
    """A stream's record for feedback, completed with what it used at its end
    (``record.py``)."""
    request_id: str | None = None
    """The caller's id of its request (``request_ids.py``), kept with its record."""


_ADD = "to call it through the gateway, configure it under agents: with backend kind openai"


def _not_called(agent: AgentConfig) -> str:
    """Why the configured ``agent`` cannot be asked through the gateway."""
    backend = getattr(agent, "backend", None)
    if getattr(agent, "remote", False) or backend is None:
        how = "it is remote (it runs as its own process and takes its tasks from the server)"
    else:
        how = f"its backend is {getattr(backend, 'kind', 'not OpenAI-compatible')}"
    return (
        f"is a configured agent this server does not call over an OpenAI-compatible backend"
        f" ({how}): it cannot be asked through the gateway"
    )


class Gateway:
    """Chooses, forwards, falls back and records; see the module."""

    def __init__(
        self, *, settings: GatewaySettings, agents: Mapping[str, AgentConfig],
        providers: Mapping[str, Provider], routing: RoutingService, health: HealthMonitor,
        calls: ProviderCalls, stats: StatsRecorder, budgets: Budgets, checks: Checks | None = None,
        feedback: Feedback | None = None,
    ) -> None:  # fmt: skip
        self.settings = settings
        self.agents = agents
        self.routing = routing
        self.health = health
        self.calls = calls
        self.stats = stats
        self.budgets = budgets
        self.totals = GatewayTotals() if checks is None else checks.totals
        self.checks = checks
        self.feedback = feedback
        self.traffic = Traffic()
        self._tasks: set[asyncio.Task[None]] = set()
        self.forwarded: dict[str, OpenAIProvider] = {
            name: p for name, p in providers.items() if isinstance(p, OpenAIProvider)
        }
        self.classifier = self._classifier(agents)

    def _classifier(self, agents: Mapping[str, AgentConfig]) -> Classifier | None:
        """``gateway.classify``'s classifier (none when it is not configured); its agent
        must be one this server forwards to."""
        settings = self.settings.classify
        if settings is None:
            return None
        asker = None
        if settings.agent is not None:
            asker = self.forwarded.get(settings.agent)
            if asker is None:
                raise InvalidInput(
                    "gateway.classify.agent", settings.agent,
                    "must name an agent of the config with an OpenAI-compatible backend (not"
                    " remote)",
                )  # fmt: skip
        prices = None if settings.agent is None else agents.get(settings.agent)
        return Classifier(
            settings, asker=asker, prices=prices, calls=self.calls, totals=self.totals
        )

    def counted_task_type(self, requested: str | None) -> str:
        """The task type a request is counted at (requests, fallbacks, added latency,
        checks: one row of the Traffic page): its own (or its classifier's), else the one its
        check and feedback are recorded at, the judge's ``default_task_type``, else
        ``general``, where feedback on it lands."""
        recorded = requested if self.checks is None else self.checks.task_type(requested)
        return recorded or UNTYPED_TASK_TYPE

    def models(self) -> list[str]:
        """What ``model`` may name: the agents (by id), the aliases, the route forms of the
        task types the aliases name, and ``route`` when requests are classified."""
        names = sorted(self.forwarded) + sorted(self.settings.models)
        types = sorted({m.task_type for m in self.settings.models.values() if m.task_type})
        bare = [ROUTE] if self.classifier is not None and ROUTE not in names else []
        return names + bare + [f"{ROUTE_PREFIX}{t}" for t in types]

    async def chosen(self, model: object, headers: Mapping[str, str]) -> Choice:
        """``choose``, a name that is no agent, route form or alias explained first
        (``_unknown``)."""
        if isinstance(model, str) and model and not self._named(model):
            raise await self._unknown(model)
        return self.choose(model, headers)

    def _named(self, model: str) -> bool:
        """Whether ``model`` is an agent this server forwards to, a route form or an alias."""
        return (
            model in self.forwarded or model == ROUTE or model.startswith(ROUTE_PREFIX)
            or model in self.settings.models
        )  # fmt: skip

    async def _unknown(self, model: str) -> UnknownModel:
        """Why ``model`` cannot be asked: an agent that exists and that this server cannot
        call says so and why (configured without an OpenAI-compatible backend, heartbeating
        from elsewhere, known by its evidence alone: imported or judged); another name is
        offered the closest names it may use (``domain/suggestions.py``): the agents, the
        aliases, ``route`` and ``route:<task_type>`` at the task types with evidence."""
        configured = self.agents.get(model)
        if configured is not None:
            return UnknownModel(model, _not_called(configured))
        store = self.routing.store
        if is_agent_name(model):
            if await store.get_registration(model) is not None:
                return UnknownModel(
                    model, f"is an agent that heartbeats from elsewhere, not one of this server's"
                    f" configured agents: the gateway calls only those with an OpenAI-compatible"
                    f" backend ({_ADD})",
                )  # fmt: skip
            if await store.get_profile(model) is not None:
                return UnknownModel(
                    model, f"is an agent known by its evidence alone (imported or judged), not"
                    f" one of this server's configured agents: the gateway calls only those with"
                    f" an OpenAI-compatible backend ({_ADD})",
                )  # fmt: skip
        types = await self.routing.task_types()
        names = [*self.models(), ROUTE, *(f"{ROUTE_PREFIX}{t}" for t in sorted(types))]
        hint = did_you_mean(closest(model, names))
        return UnknownModel(
            model, "names no agent, route form (route, route:<task_type>[:<strategy>]) or"
            f" alias{'; ' + hint if hint else ''} (GET /v1/models lists them)",
        )  # fmt: skip

    def choose(self, model: object, headers: Mapping[str, str]) -> Choice:
        """What the request asks for (``choice.choose``), an agent this server cannot
        forward to refused by name."""
        if isinstance(model, str) and model in self.agents and model not in self.forwarded:
            raise UnknownModel(model, _not_called(self.agents[model]))
        return choose(
            model, headers, agents=self.forwarded.keys(), aliases=self.settings.models,
            attempts=self.settings.max_attempts,
            explore_share=self.routing.rules.max_explore_share,
        )  # fmt: skip

    async def plan(self, choice: Choice) -> tuple[list[str], Routing | None]:
        """The agents to try, in order, and the routing that chose them."""
        if choice.agent_id is not None:
            return [choice.agent_id], None
        assert choice.spec is not None
        judge = None if self.checks is None or self.checks.settings is None else (
            self.checks.settings.agent
        )  # fmt: skip
        reachable = [name for name in self.forwarded if name != judge]
        routing = await self.routing.route(choice.spec, reachable=reachable, online_only=True)
        if not routing.agents:
            excluded = [_judge_named(e.model_dump(mode="json"), judge) for e in routing.excluded]
            raise NoAgentQualifies(choice.model, excluded)
        picks = [p.agent_id for p in routing.agents][: self.settings.max_attempts]
        return picks, routing

    async def classified(
        self, choice: Choice, messages: list[Any], token: TokenSettings | None
    ) -> tuple[Choice, float]:
        """``choice`` with a task type from ``gateway.classify`` when it is a routing that
        names none (unchanged otherwise, or without a classifier), and the seconds its agent
        took; the agent's cost is charged to ``token`` at once (it was spent, whatever the
        request's end)."""
        if self.classifier is None or not choice.untyped:
            return choice, 0.0
        found = await self.classifier.classify(messages)
        if found.cost_usd:
            self.budgets.charge(token, found.cost_usd)
        return choice.typed(found.task_type, found.how, found.cost_usd), found.waited_s

    async def complete(
        self, body: Mapping[str, Any], headers: Mapping[str, str], caller: str = "admin",
        token: TokenSettings | None = None, told: dict[str, str] | None = None,
    ) -> Served:  # fmt: skip
        """Answer one request (``body``: the caller's JSON object, ``caller``: its token's
        name); ``AgentsFailed`` when every agent tried failed. The answer's cost is charged
        to ``token`` (the caller's: ``budgets.py``): for a client with a budget, money is
        held before the first attempt and the answer's cost replaces it (a stream's once,
        whatever its end: ``bills.py``); a request no agent answered releases it.
        ``told`` receives the headers saying how the request was routed (``said.py``) as
        soon as each is known, for the answer and for an error after the choice."""
        told = {} if told is None else told
        choice = await self.chosen(body.get("model"), headers)
        stream = body.get("stream", False)
        if not isinstance(stream, bool):
            raise InvalidInput("stream", stream, "must be true or false")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise InvalidInput("messages", messages, "must be a non-empty list")
        choice, classifying_s = await self.classified(choice, messages, token)
        told.update(said(choice))
        agents, routing = await self.plan(choice)
        told.update(said(choice, routing))
        bill = await self.budgets.reserve(token, lambda: holding(
            [self.agents[a] for a in agents], body, request_tokens(body),
            self.settings.reserve_output_tokens,
        ))  # fmt: skip
        try:
            served = await self._attempts(body, messages, stream, choice, agents, routing, bill,
                                          caller, client_request_id(headers))  # fmt: skip
        except BaseException:
            await bill.close()  # nothing settled it: the hold is released
            raise
        served.budget = bill.headers()
        served.provider_s += classifying_s  # the classifier's time is a provider's
        if served.stream is None:
            await bill.close()  # its settle is written before the answer goes
        else:
            served.stream = billed(served.stream, bill, lambda: self._ended(served))
        return served

    def _ended(self, served: Served) -> float:
        """A stream's end, whatever it is: its record completed with what was relayed
        (``record.py``); the cost of that, which its bill is settled at."""
        usage = served.tally.usage()
        if self.feedback is not None and served.record is not None:
            self.feedback.book.add(costed(served.record, usage, self.agents))
        return call_cost(self.agents[served.agent_id], usage)

    async def _attempts(
        self, body: Mapping[str, Any], messages: list[Any], stream: bool, choice: Choice,
        agents: list[str], routing: Routing | None, bill: Bill, caller: str,
        request_id: str | None = None,
    ) -> Served:  # fmt: skip
        """The agents asked in turn until one answers (``complete``); ``request_id``: the
        caller's id of the request, kept with the answer's record."""
        contract = new_contract_id()
        failures: list[tuple[str, str]] = []
        task_type = self.counted_task_type(choice.task_type)
        waited = 0.0
        rejected: Rejected | None = None
        failed = False
        for agent in agents:
            wait = self.health.retry_wait_s(agent)
            if wait > 0:
                failures.append((agent, f"not asked: its provider asked not to be called"
                                 f" for {wait:.0f} s more (Retry-After)"))  # fmt: skip
                continue
            tally = Tally(prompt=request_tokens(body))
            started = time.perf_counter()
            try:
                served = await self._ask(agent, body, stream, tally, started, task_type, bill)
            except ProviderError as error:
                if isinstance(error, Rejected):  # the request's fault, not the agent's
                    self.calls.observe(agent, CALL, time.perf_counter() - started, error.kind)
                    rejected = error
                else:
                    self._record(agent, started, error)
                    self.totals.failed_attempts[agent] += 1
                    failed = True
                waited += time.perf_counter() - started
                failures.append((agent, str(error)))
                continue
            served.contract_id, served.choice, served.routing = contract, choice, routing
            served.failures, served.tally, served.request_id = failures, tally, request_id
            served.provider_s += waited
            await self._decide(served, messages, caller)
            return served
        if rejected is not None and not failed:  # every agent asked refused the request
            raise RequestRejected(choice.model, failures, rejected)
        self.totals.unavailable[task_type] += 1
        raise AgentsFailed(choice.model, failures, self._retry_after(agents))

    def _retry_after(self, agents: list[str]) -> int:
        """When the caller may try again: the soonest any of ``agents`` may be asked
        (its cooldown and its provider's Retry-After; ``domain/routing/retry.py``)."""
        now = self.health.now()
        waits = []
        for agent in agents:
            cooldown = self.health.cooldown(agent)
            until = None if cooldown is None else cooldown.until
            waits.append(agent_wait_s(now, until, now + self.health.retry_wait_s(agent)))
        return retry_after_s(waits)

    async def _decide(self, served: Served, messages: list[object], caller: str) -> None:
        """Record the answer for feedback (``feedback.py``); whether it is checked (the
        Sentinel, ``checks.py``): a non-streamed one is queued for its judge now, a stream
        once it is whole."""
        checks = self.checks
        agent, contract = served.agent_id, served.contract_id
        task_type = (
            served.choice.task_type if checks is None else checks.task_type(served.choice.task_type)
        )
        at = time.time()
        if self.feedback is not None:
            record = served_record(
                contract_id=contract, agent_id=agent, caller=caller, task_type=task_type, at=at,
                routing=served.routing, agents=self.agents,
                usage=served.tally.usage() if served.stream is None else None,
                classifier_cost=served.choice.classifier_cost, request_id=served.request_id,
            )  # fmt: skip
            self.feedback.book.add(record)
            served.record = record if served.stream is not None else None
        if checks is None or task_type is None:
            return
        if not await checks.decide(agent, task_type):
            return
        if served.stream is None:
            answer = answer_of(served.body)
            pending = checks.pending(contract, agent, task_type, messages, at, answer)
            served.check = await checks.submit(pending)  # promised only once it is kept
            return
        served.check = checks.promise(agent, task_type)  # a place held until its end
        if not served.check:
            return

        async def whole(tally: Tally, note: str = "") -> None:
            text = "".join(tally.text or ()) + note
            pending = checks.pending(contract, agent, task_type, messages, at, text)
            await checks.submit(pending, promised=True)

        def cut(tally: Tally, why: str) -> None:  # what went out is checked all the same
            self._background(whole(tally, f"\n\n[{CUT_NOTE}: {why}]"))

        served.whole = whole
        served.cut = cut

    async def _ask(
        self, agent: str, body: Mapping[str, Any], stream: bool, tally: Tally, started: float,
        task_type: str, bill: Bill,
    ) -> Served:  # fmt: skip
        provider = self.forwarded[agent]
        blank = Choice(model="")
        if not stream:
            status, raw, retry_after = await provider.relay(body)
            waited = time.perf_counter() - started
            answered(status, raw, retry_after, tally)
            self._record(agent, started, None, tally.usage(), bill)
            self.totals.requests[agent, task_type, "answered"] += 1
            served = Served("", agent, blank, None, [], body=raw, usage=tally.usage())
            served.provider_s = waited
            return served
        opened = await open_stream(provider, body, tally)
        served = Served("", agent, blank, None, [])
        served.provider_s = time.perf_counter() - started

        async def finished() -> None:
            self._record(agent, started, None, tally.usage(), bill)
            if served.whole is not None:
                await served.whole(tally)

        async def relayed() -> AsyncIterator[bytes]:
            outcome = "cancelled"  # the caller went away: nobody's failure
            if served.whole is not None:
                tally.text = []  # kept for the check
            try:
                async for chunk in opened.rest():
                    whole = opened.done and opened.error is None
                    if whole and outcome == "cancelled":  # whole: recorded before
                        outcome = "answered"  # the caller reads its end
                        await finished()
                    yield chunk
                if opened.error is not None:  # passed on: the caller's client raises it
                    outcome = "broken"
                    error = ProviderError("invalid", opened.error)
                    self._record(agent, started, error, tally.usage(), bill)
                elif outcome == "cancelled":  # ended without [DONE]: what it sent is all
                    outcome = "answered"
                    await finished()
            except ProviderError as error:
                outcome = "broken"
                self._record(agent, started, error, tally.usage(), bill)
                yield _error_event(str(error))
            finally:
                self.totals.requests[agent, task_type, outcome] += 1
                if outcome == "cancelled":  # what was relayed is charged all the same
                    self._charge(agent, tally.usage(), bill)
                if outcome != "answered" and served.cut is not None:
                    served.cut(tally, CUT_WHY[outcome])

        served.stream = relayed()
        return served

    def _record(
        self, agent: str, started: float, error: ProviderError | None, usage: Usage | None = None,
        bill: Bill | None = None,
    ) -> None:  # fmt: skip
        """One attempt's call recorded; with ``usage``, its cost, which settles ``bill``
        (the first settle of a request counts: ``bills.py``)."""
        seconds = time.perf_counter() - started
        self.calls.observe(agent, CALL, seconds, None if error is None else error_kind(error))
        self.health.record(
            agent, ok=error is None, error=None if error is None else str(error),
            retry_after_s=None if error is None else error.retry_after_s,
        )  # fmt: skip
        self.stats.add(Submission(agent_id=agent, latency_ms=seconds * 1000, ok=error is None))
        if usage is not None:
            self._charge(agent, usage, bill)

    def _charge(self, agent: str, usage: Usage, bill: Bill | None) -> None:
        """What an answer used, at the agent's prices: its provider's spend in
        ``/metrics``, and the caller's bill (the first settle of a request counts)."""
        cost = call_cost(self.agents[agent], usage)
        self.calls.spend(agent, usage.input_tokens, usage.output_tokens, cost)
        if bill is not None:
            bill.settle(cost)

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` apart from the request (a stream's check after its caller went
        away: the request's own task is being cancelled), held until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _judge_named(excluded: dict[str, Any], judge: str | None) -> dict[str, Any]:
    """An exclusion as the caller reads it: the judge's says why it is never routed."""
    if (
        judge is None
        or excluded.get("agent_id") != judge
        or excluded.get("reason") != "unreachable"
    ):
        return excluded
    detail = (
        "the gateway's judge (gateway.judge.agent) is never routed: its answers could not"
        " be checked"
    )
    return {**excluded, "detail": detail}


def _error_event(message: str) -> bytes:
    """A server-sent event OpenAI's clients read as an error (the stream broke midway)."""
    payload = {
        "error": {
            "message": f"the agent's stream broke: {message}",
            "type": "server_error",
            "param": None,
            "code": "upstream_error",
        }
    }
    return b"data: " + json.dumps(payload).encode() + b"\n\n"
