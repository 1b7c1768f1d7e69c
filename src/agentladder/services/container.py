"""All services of one agentladder instance, built from its configuration.

``build_services(settings)`` opens the store, registers the configured agents the server
asks itself (and heartbeats for them), builds their providers (an agent whose API key
variable is missing is down from the start: ``providers/preflight.py``), and, on a NATS
store, listens for heartbeats on NATS and asks ``remote: true`` agents over NATS. It
tells ``redaction.py`` the configuration's secrets and has the process's log lines
redacted: no secret leaves through an error or a log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from agentladder.config import Settings
from agentladder.domain.agents import AgentConfig
from agentladder.errors import RevisionConflict, StoreUnavailable
from agentladder.providers.base import Provider
from agentladder.providers.factory import make_provider
from agentladder.providers.preflight import missing_keys
from agentladder.redaction import redact_logs, remember
from agentladder.secret_values import known_secrets, url_secrets
from agentladder.services.agents.http import HttpAgentProvider, TaskBoard
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import Clock, SystemClock
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.deliberations.recovery import recover
from agentladder.services.gateway.budgets import Budgets
from agentladder.services.gateway.checks import Checks, judge_of
from agentladder.services.gateway.feedback import Feedback, ServedBook
from agentladder.services.gateway.service import Gateway
from agentladder.services.gateway.stats import StatsRecorder
from agentladder.services.gateway.totals import GatewayTotals
from agentladder.services.lease import Lease
from agentladder.services.oracle.sentinel import Sentinel
from agentladder.services.oracle.service import Oracle
from agentladder.services.passes import QuietPasses, cancelled
from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.projection import RoutingProjection
from agentladder.services.routing.savings import RecentSavings
from agentladder.services.routing.service import RoutingService
from agentladder.services.skill.applier import SkillApplier
from agentladder.services.skill.service import FitReport, SkillService
from agentladder.store.base import Store
from agentladder.store.url import open_store
from agentladder.store.watched import Changes, WatchedStore

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.aio.subscription import Subscription

__all__ = ["Services", "build_services"]

log = logging.getLogger(__name__)

SLOW_STOP_S = 2.0
"""A step of a stop that runs this long is said in the log (``stopping``)."""


@dataclass
class Services:
    """The store and every service over it."""

    settings: Settings
    store: Store
    registry: Registry
    oracle: Oracle
    sentinel: Sentinel
    skill: SkillService
    orchestrator: Orchestrator
    providers: dict[str, Provider]
    routing: RoutingService
    health: HealthMonitor
    gateway: Gateway
    nc: Client | None = None
    subscriptions: list[Subscription] = field(default_factory=list)
    tasks: TaskBoard = field(default_factory=TaskBoard)
    tasks_for: frozenset[str] = frozenset()  # agents that take their tasks over HTTP
    lease: Lease | None = None  # this instance's, held from build to close
    applier: SkillApplier | None = None  # the skill queue's, with a store that keeps one
    savings: RecentSavings = field(default_factory=RecentSavings)  # the dashboard's panel
    _background: list[asyncio.Task[None]] = field(default_factory=list)

    def start_background(self) -> None:
        """In the background: heartbeats of the in-process agents every interval, and
        recovery (``services/deliberations/recovery.py``) now and every ``recover_interval_s``."""
        settings = self.settings.orchestrator

        async def beat() -> None:
            while True:
                await asyncio.sleep(settings.heartbeat_interval_s)
                with contextlib.suppress(Exception):  # the next beat tries again
                    await self.registry.beat_local()

        async def recovering() -> None:
            passes = QuietPasses("recovery", (StoreUnavailable,))
            orchestrator = self.orchestrator

            async def one_pass() -> None:
                await recover(orchestrator, now=orchestrator.clock.now().timestamp())

            while True:
                await passes.run(one_pass)
                await asyncio.sleep(settings.recover_interval_s)

        async def fitting() -> None:
            passes = QuietPasses("the skill fit", (StoreUnavailable, RevisionConflict))
            skill, interval = self.skill, self.settings.skill.fit_interval_s
            pause = interval
            fits: list[FitReport] = []

            async def one_pass() -> None:
                fits[:] = [await skill.fit_now()]  # one in flight (an admin's): shared

            try:
                while True:
                    skill.schedule.next_look_in(pause)
                    await asyncio.sleep(pause)
                    started = time.monotonic()
                    fits.clear()
                    await passes.run(one_pass)
                    took = fits[0].seconds if fits else time.monotonic() - started
                    # a fit takes at most about a tenth of the time: it shares the
                    # interpreter with the event loop, whose answers it would otherwise slow
                    pause = max(interval, 9.0 * took)
            finally:
                skill.schedule.stopped()

        self.gateway.stats.start()
        self.gateway.budgets.start()
        if self.gateway.checks is not None:  # and the checks stored before this start
            self.gateway.checks.start()
        if self.gateway.feedback is not None:
            self.gateway.feedback.book.start()
        self._background = [
            asyncio.ensure_future(beat()),
            asyncio.ensure_future(recovering()),
            asyncio.ensure_future(fitting()),
        ]
        if self.skill.queue is not None and self.skill.queue.in_serve:
            self.applier = SkillApplier(
                self.skill.queue, self.skill, self.orchestrator.instance_id,
                self.orchestrator.clock,
            )  # fmt: skip
            self._background.append(asyncio.ensure_future(self.applier.start()))

    async def close(self, cause: str = "the service stopped") -> int:
        """Stop background work, close providers, connections and the store; how many
        deliberations in flight were interrupted (each stored failed, ``interrupted:
        <cause>``, with its calls and their cost; said in one line when any)."""
        async with stopping("the background work"):
            await cancelled(self._background)
            if self.applier is not None:  # its batches in flight end, its shards are freed
                await self.applier.stop()
            await self.skill.close()  # a fit's commit, once begun, ends whole
        async with stopping("the deliberations in flight"):
            interrupted = await self.orchestrator.close(cause)
        async with stopping("the routing projection"):
            await self.routing.close()
        async with stopping("the gateway's checks"):
            if self.gateway.checks is not None:
                await self.gateway.checks.close(self.settings.api.shutdown_grace_s)
        async with stopping("the gateway's stats"):
            await self.gateway.stats.close()
            if self.gateway.feedback is not None:
                await self.gateway.feedback.book.close()
        async with stopping("the gateway clients' spend"):
            await self.gateway.budgets.close()
        if interrupted:
            log.warning(
                "%s: interrupted %d deliberation%s in flight, stored as failed (interrupted)"
                " with the calls made and their cost", cause, interrupted,
                "" if interrupted == 1 else "s",
            )  # fmt: skip
        if self.lease is not None:  # what this instance leaves is taken over at once
            async with stopping("dropping the lease"):
                await self.lease.stop()
        async with stopping("the agents' providers"):
            for provider in self.providers.values():
                await provider.aclose()
        try:
            async with stopping("the agents' NATS connection"):
                for subscription in self.subscriptions:
                    await subscription.unsubscribe()
                if self.nc is not None:
                    await self.nc.close()
        except Exception:  # a dead connection must not keep the store open
            log.exception("closing the NATS connection of the agents failed")
        async with stopping("the store"):
            await self.store.close()
        return interrupted


@contextlib.asynccontextmanager
async def stopping(step: str, slow_s: float = SLOW_STOP_S) -> AsyncIterator[None]:
    """One step of a stop, said when it is slow: once it has run ``slow_s`` (so a stop that
    the watchdog ends has said where it was) and when it ends, with how long it took."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    still = loop.call_later(slow_s, _still, step, slow_s)
    try:
        yield
    finally:
        still.cancel()
        took = loop.time() - started
        if took >= slow_s:
            log.warning("stopping: %s took %.1f s", step, took)


def _still(step: str, slow_s: float) -> None:
    """Say that a step of a stop still runs, and where every task of the loop waits: what
    a stop that the watchdog ends was waiting for, which the threads' stacks it then
    writes do not show."""
    waits = sorted(_where(task) for task in asyncio.all_tasks())
    log.warning("stopping: %s still runs after %.0f s; tasks waiting: %s", step, slow_s,
                "; ".join(waits) or "none")  # fmt: skip


def _where(task: asyncio.Task[Any]) -> str:
    """A task's coroutine and the last three coroutines of what it awaits, innermost last
    (each with its file and line)."""
    coro: Any = task.get_coro()
    name = getattr(coro, "__qualname__", task.get_name())
    chain = []
    while coro is not None and getattr(coro, "cr_frame", None) is not None:
        code, line = coro.cr_frame.f_code, coro.cr_frame.f_lineno
        chain.append(f"{code.co_qualname} ({Path(code.co_filename).name}:{line})")
        coro = getattr(coro, "cr_await", None)
    return f"{name}: {' > '.join(chain[-3:])}" if chain else name


async def _over_nats(
    url: str, settings: Settings, registry: Registry, providers: dict[str, Provider]
) -> tuple[Client, Subscription]:
    """On a NATS store: a connection that takes heartbeats (its subscription) and asks the
    ``remote: true`` agents, added to ``providers``. Imported here: only a NATS store needs
    NATS's client, which loads aiohttp (a large part of a process's start)."""
    from nats.aio.client import Client  # noqa: PLC0415

    from agentladder.services.agents.nats import NatsAgentProvider, serve_heartbeats  # noqa: PLC0415
    from agentladder.store.nats.config import parse_nats_url  # noqa: PLC0415
    from agentladder.store.nats.io import callbacks  # noqa: PLC0415

    options = parse_nats_url(url)
    nc = Client()
    await nc.connect(
        list(options.servers),
        max_reconnect_attempts=-1,
        **callbacks(f"{options.url} (agents)", nc),
    )
    heartbeats = await serve_heartbeats(nc, registry, options.prefix)
    for agent in settings.agents:
        if agent.remote:
            providers[agent.name] = NatsAgentProvider(
                nc, options.prefix, agent.name, timeout_s=settings.orchestrator.timeout_s
            )
    return nc, heartbeats


async def build_services(
    settings: Settings,
    *,
    store_url: str | None = None,
    clock: Clock | None = None,
    seed: int | None = None,
) -> Services:
    """Open the store and build the services; the caller closes them."""
    url = store_url or settings.store
    remember(known_secrets(settings))  # no secret leaves through an error (redaction.py)
    remember(url_secrets(url))
    redact_logs()
    changes = Changes()
    watched = WatchedStore(await open_store(url), changes)
    store = cast(Store, watched)
    clock = clock or SystemClock()
    agents = {agent.name: agent for agent in settings.agents}
    skill = SkillService(store, settings.skill, clock)
    oracle = Oracle(
        store, settings.oracle, clock=clock, agents=agents, skill=skill, sentinel=settings.sentinel
    )
    registry = Registry(
        store,
        clock=clock,
        heartbeat_interval_s=settings.orchestrator.heartbeat_interval_s,
        configured=settings.agents,
        skill=skill,
        oracle=oracle,
    )
    providers: dict[str, Provider] = {}
    for agent in settings.agents:
        if agent.backend is not None and not agent.remote:
            declared = AgentConfig.model_validate(agent.model_dump(exclude={"backend", "remote"}))
            providers[agent.name] = make_provider(declared, agent.backend)
    nc = None
    subscriptions = []
    board = TaskBoard()
    over_http = frozenset(a.name for a in settings.agents if a.remote)
    if url.startswith(("nats://", "tls://")):
        nc, heartbeats = await _over_nats(url, settings, registry, providers)
        subscriptions.append(heartbeats)
        over_http = frozenset()
    for name in over_http:  # without NATS, remote agents poll their tasks over HTTP
        providers[name] = HttpAgentProvider(board, name, timeout_s=settings.orchestrator.timeout_s)
    health = HealthMonitor(settings.routing, clock)
    for name, why in missing_keys(settings).items():  # it cannot make a single call
        health.pin(name, why)
    projection = None
    if settings.routing.projection_refresh_s > 0:
        try:
            follows = await watched.follow()  # other instances' writes (NATS)
        except BaseException:
            await store.close()
            raise
        projection = RoutingProjection(
            store=store, registry=registry, skill=skill, changes=changes,
            oracle_rules=settings.oracle, tail_sd=settings.routing.explore_tail_sd,
            refresh_s=settings.routing.projection_refresh_s, follows=follows,
        )  # fmt: skip
    routing = RoutingService(
        store=store, registry=registry, skill=skill, oracle_rules=settings.oracle,
        health=health, rules=settings.routing, projection=projection,
    )  # fmt: skip
    orchestrator = Orchestrator(
        store=store, registry=registry, oracle=oracle, providers=providers, agents=agents,
        settings=settings.orchestrator, clock=clock, routing=routing, health=health,
    )  # fmt: skip
    sentinel = Sentinel(oracle, seed=seed)
    gateway = await _gateway(
        settings, store, agents=agents, providers=providers, routing=routing, health=health,
        orchestrator=orchestrator, sentinel=sentinel, skill=skill, clock=clock,
    )  # fmt: skip
    lease = Lease(store, orchestrator.instance_id, clock, settings.orchestrator.lease_s)
    await lease.start()
    await registry.beat_local()
    await orchestrator.load_mentors()
    return Services(
        settings=settings, store=store, registry=registry, oracle=oracle,
        sentinel=sentinel, skill=skill, orchestrator=orchestrator,
        providers=providers, routing=routing, health=health, gateway=gateway, nc=nc,
        subscriptions=subscriptions, tasks=board,
        tasks_for=over_http, lease=lease,
    )  # fmt: skip


async def _gateway(
    settings: Settings, store: Store, *, agents: Mapping[str, AgentConfig],
    providers: Mapping[str, Provider], routing: RoutingService, health: HealthMonitor,
    orchestrator: Orchestrator, sentinel: Sentinel, skill: SkillService, clock: Clock,
) -> Gateway:  # fmt: skip
    """The gateway with its checks, feedback and budgets; the clients' spend stored before
    this start read before the first request is checked."""
    judge, judge_prices, own_judge = judge_of(settings.gateway.judge, agents, providers)
    checks = Checks(
        settings=settings.gateway.judge, sentinel=sentinel, judge=judge, prices=judge_prices,
        totals=GatewayTotals(), owns_judge=own_judge, holder=orchestrator.instance_id,
        sweep_s=settings.orchestrator.recover_interval_s,
    )  # fmt: skip
    gateway = Gateway(
        settings=settings.gateway, agents=agents, providers=providers, routing=routing,
        health=health, calls=orchestrator.calls, stats=StatsRecorder(store),
        budgets=Budgets(
            store, settings.api.tokens, clock, reservation_s=settings.gateway.reservation_s
        ),
        checks=checks,
        feedback=Feedback(
            ServedBook(store, settings.gateway.feedback_days * 86_400.0), skill,
            settings.gateway.judge,
        ),
    )  # fmt: skip
    try:
        await gateway.budgets.refresh()
    except StoreUnavailable as error:
        log.warning("the gateway clients' spend is not read yet (read again each second): %s",
                    error)  # fmt: skip
    return gateway
