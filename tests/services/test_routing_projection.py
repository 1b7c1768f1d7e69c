"""The routing projection answers as the full read does (same picks, same order, same
exclusions and reasons) after any sequence of commits, on every store; it builds only the
candidates a routing reads; its background load brings in what other instances wrote."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentladder.domain.external import ExternalDeliberation
from agentladder.domain.levels import Level
from agentladder.domain.routing import RouteSpec, RoutingRules, Strategy, route
from agentladder.domain.rules import Complexity
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.natsserver import NatsServer
from agentladder.services.agents.registry import Registry
from agentladder.services.clock import FixedClock
from agentladder.services.deliberations.orchestrator import Orchestrator
from agentladder.services.oracle.models import JudgmentRequest
from agentladder.services.oracle.service import Oracle
from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.orders import Merged
from agentladder.services.routing.projection import RoutingProjection
from agentladder.services.routing.service import RoutingService
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store
from agentladder.store.memory import MemoryStore
from agentladder.store.records import Registration
from agentladder.store.url import open_store
from agentladder.store.watched import Changes, WatchedStore
from tests.conftest import BACKENDS, unique_nats_url

AGENTS = [f"a{i}" for i in range(8)]
TYPES = ["code_review", "summarize"]
TAGS = ["python", "fast"]


@dataclass
class Instance:
    """One service instance: its watched store, clock, services and projection."""

    store: Store
    watched: WatchedStore
    clock: FixedClock
    skill: SkillService
    oracle: Oracle
    registry: Registry
    health: HealthMonitor
    orchestrator: Orchestrator
    service: RoutingService
    projection: RoutingProjection


async def instance(url: str, refresh_s: float = 1e6, opened: Store | None = None) -> Instance:
    """Services over a store at ``url`` (or ``opened``), routing from a projection."""
    changes = Changes()
    watched = WatchedStore(opened or await open_store(url), changes)
    store = cast(Store, watched)
    clock = FixedClock()
    skill = SkillService(store, clock=clock)
    oracle = Oracle(store, clock=clock, skill=skill)
    registry = Registry(store, clock=clock, skill=skill, heartbeat_interval_s=10.0)
    health = HealthMonitor(RoutingRules(), clock)
    orchestrator = Orchestrator(
        store=store, registry=registry, oracle=oracle, providers={}, clock=clock
    )
    projection = RoutingProjection(
        store=store, registry=registry, skill=skill, changes=changes,
        oracle_rules=oracle.rules, tail_sd=4.0, refresh_s=refresh_s,
    )  # fmt: skip
    service = RoutingService(
        store=store, registry=registry, skill=skill, health=health, projection=projection
    )
    return Instance(store, watched, clock, skill, oracle, registry, health, orchestrator, service,
                    projection)  # fmt: skip


SPECS = [
    RouteSpec(count=2, task_type="code_review"),
    RouteSpec(count=3, task_type="summarize", strategy=Strategy.EXPLORE),
    RouteSpec(count=2, strategy=Strategy.EXPLORE),
    RouteSpec(
        count=2, task_type="code_review", strategy=Strategy.CHEAPEST_ABOVE, quality_floor=5.0
    ),
    RouteSpec(count=2, task_type="code_review", max_cost_per_round=0.02, tags=("python",)),
    RouteSpec(count=4, task_type="summarize", min_level=Level.RELIABLE),
    RouteSpec(
        count=1,
        task_type="summarize",
        strategy=Strategy.CHEAPEST_ABOVE,
        quality_floor_share=0.9,
        confidence=0.7,
        explore_share=0.5,
    ),
]
"""The requests compared after each commit: every strategy, each rule."""


async def compare(world: Instance, seed: int) -> None:
    """Every request of ``SPECS``, with and without the online and reachable limits and
    a complexity and rank floor, answers the same from the projection as from the full
    read with the skill estimates as of the projection's moment."""
    frozen = FixedClock(datetime.fromtimestamp(await world.projection.moment(), UTC))
    full = RoutingService(
        store=world.store, registry=world.registry, health=world.health,
        skill=SkillService(world.store, world.skill.rules, clock=frozen),
    )  # fmt: skip
    for index, spec in enumerate(SPECS):
        for online_only, reachable, complexity, min_rank in (
            (True, None, None, 0),
            (False, set(AGENTS[::2]), Complexity.COMPLEX, 1),
        ):
            table = await world.service.projected(
                spec.task_type, reachable, online_only=online_only
            )
            got = route(table, spec, now=0.0, seed=seed + index, complexity=complexity,
                        min_rank=min_rank)  # fmt: skip
            expected_table = await full.table(spec.task_type, reachable, online_only=online_only)
            expected = route(expected_table, spec, now=0.0, seed=seed + index,
                             complexity=complexity, min_rank=min_rank)  # fmt: skip
            assert got.model_dump() == expected.model_dump(), (spec, online_only)


agent = st.sampled_from(AGENTS)
commits = st.one_of(
    st.tuples(st.just("register"), agent, st.integers(0, 12), st.sets(st.sampled_from(TAGS))),
    st.tuples(
        st.just("judge"),
        agent,
        st.sampled_from(TYPES),
        st.one_of(st.none(), st.floats(0.0, 10.0)),
        st.booleans(),
    ),
    st.tuples(
        st.just("deliberate"), st.sets(agent, min_size=2, max_size=4), st.sampled_from(TYPES)
    ),
    st.tuples(st.just("promote"), agent, st.integers(0, 5)),
    st.tuples(
        st.just("calls"),
        agent,
        st.lists(st.booleans(), min_size=1, max_size=8),
        st.sampled_from([None, 30.0]),
    ),
    st.tuples(st.just("advance"), st.sampled_from([5.0, 25.0, 90.0, 3600.0])),
    st.tuples(st.just("fit")),
)


async def commit(world: Instance, step: tuple[Any, ...], index: int) -> None:
    """Apply one commit (or a moment passing) to ``world``."""
    kind = step[0]
    if kind == "register":
        _, name, price, tags = step
        await world.registry.heartbeat({
            "name": name, "input_price_per_mtok": price, "output_price_per_mtok": price,
            "capability_tags": sorted(tags),
        })  # fmt: skip
    elif kind == "judge":
        _, name, task_type, score, success = step
        known = await world.store.get_registration(name)
        await world.oracle.submit_for_judgment(JudgmentRequest(
            agent_id=name, contract_id=f"c{index}", task_type=task_type, score=score,
            success=success, new_agent=known is None,
        ))  # fmt: skip
    elif kind == "deliberate":
        _, names, task_type = step
        authors = sorted(names)
        rounds = [{"agents": {
            author: {"aggregated_score": 5.0 + i, "latency_ms": 100.0 * (i + 1),
                     "evaluations": {e: 4.0 + i for e in authors if e != author}}
            for i, author in enumerate(authors)
        }}]  # fmt: skip
        for name in authors:
            if await world.store.get_registration(name) is None:
                await commit(world, ("register", name, 1, set()), index)
        await world.orchestrator.report(ExternalDeliberation.model_validate(
            {"deliberation_id": f"d{index}", "task_type": task_type, "rounds": rounds}
        ))  # fmt: skip
        await world.orchestrator.settle()
    elif kind == "promote":
        _, name, rank = step
        found = await world.store.get_stats(name)
        value = AgentPerformanceStats() if found is None else found.value
        latencies = (*value.recent_latencies_ms, 50.0 * (index + 1))[-64:]
        new = value.model_copy(update={"rank": rank, "recent_latencies_ms": latencies})
        await world.store.commit_stats({name: (new, 0 if found is None else found.revision)})
    elif kind == "calls":  # answered (True) or failed; the last may ask to retry later
        _, name, outcomes, retry_after = step
        for n, ok in enumerate(outcomes, start=1):
            asked = retry_after if n == len(outcomes) else None
            world.health.record(name, ok=ok, error=None if ok else "boom", retry_after_s=asked)
    elif kind == "advance":
        world.clock.advance(step[1])
    else:
        await world.skill.fit(force=True)


@pytest.fixture(params=BACKENDS)
def fresh_url(request: pytest.FixtureRequest) -> Callable[[], str]:
    """A factory of URLs of fresh, empty stores of each backend."""
    if request.param == "memory":
        return lambda: "memory://"
    if request.param == "nats":
        server: NatsServer = request.getfixturevalue("session_nats_server")
        return lambda: unique_nats_url(server.url)
    folder = tempfile.mkdtemp(prefix="projection-")
    return lambda: f"sqlite:///{folder}/{uuid.uuid4().hex}.db"


@settings(
    derandomize=True, max_examples=25, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)  # fmt: skip
@given(steps=st.lists(commits, min_size=1, max_size=14))
def test_the_projection_routes_as_the_full_read_after_any_commits(
    fresh_url: Callable[[], str], steps: list[tuple[Any, ...]]
) -> None:
    """After each of a random sequence of commits (registrations and heartbeats, judgments,
    deliberations, promotions, provider calls that fail, time passing, skill fits), every
    routing from the projection equals the full read's: same picks, order, exclusions and
    reasons."""

    async def main() -> None:
        world = await instance(fresh_url())
        try:
            for name in AGENTS[:3]:  # a few agents from the start, with evidence
                await commit(world, ("register", name, 3, {"python"}), 0)
            await compare(world, 0)
            for index, step in enumerate(steps, start=1):
                await commit(world, step, index)
                await compare(world, index)
        finally:
            await world.service.close()
            await world.store.close()

    asyncio.run(main())


def test_a_routing_builds_only_the_candidates_it_reads() -> None:
    """With 300 agents, best's routing of 3 builds the picks and the agents it lists
    (routing.max_listed_excluded, here 5), not the fleet."""

    async def main() -> None:
        world = await instance("memory://")
        try:
            for i in range(300):
                name = f"b{i:03d}"
                await world.registry.heartbeat({"name": name, "input_price_per_mtok": i % 7})
                await world.oracle.submit_for_judgment(JudgmentRequest(
                    agent_id=name, contract_id=f"c{i}", task_type="code_review",
                    score=float(i % 10), success=True,
                ))  # fmt: skip
            rules = RoutingRules(max_listed_excluded=5)
            table = await world.service.projected("code_review")
            answer = route(table, SPECS[0].model_copy(update={"count": 3}), now=0.0, seed=1,
                           rules=rules)  # fmt: skip
            assert answer.enough
            assert len(answer.excluded) == 5
            by_low, by_cost = table.by_low, table.by_cost
            assert isinstance(by_low, Merged)
            assert isinstance(by_cost, Merged)
            assert by_low.built == 31  # the 30 tied at the top (score 9), and the next
            assert by_cost.built == 0  # cheapest_above's order: not read
            assert len(by_low) == 300
        finally:
            await world.store.close()

    asyncio.run(main())


async def until_equal(world: Instance, deadline_s: float = 20.0) -> None:
    """Wait, at most ``deadline_s``, until ``compare`` passes; then check it once more."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    while True:
        try:
            await compare(world, 7)
            return
        except AssertionError:
            if loop.time() > end:
                raise
            await asyncio.sleep(0.05)


OTHERS = [
    ("register", "a1", 2, {"python"}),
    ("judge", "a1", "code_review", 9.5, True),
    ("register", "a5", 0, set()),
    ("judge", "a6", "summarize", 8.0, True),  # known by its evidence alone
    ("promote", "a0", 3),
    ("register", "a0", 7, {"fast"}),  # a new declaration of an agent both know
    ("deliberate", {"a0", "a1", "a5"}, "code_review"),
    ("fit",),
    ("judge", "a5", "code_review", 1.0, False),
]
"""What the other instance commits: registrations, judgments, a promotion, a
deliberation, a fit."""


def test_two_instances_on_one_nats_see_each_others_commits(
    session_nats_server: NatsServer,
) -> None:
    """Two instances on one nats-server: after each commit made on the second, the first's
    projection routes as a full read of the store (it follows the streams), without
    waiting for its background load."""

    async def main() -> None:
        url = unique_nats_url(session_nats_server.url)
        first, second = await instance(url), await instance(url)
        try:
            assert await first.watched.follow()
            await commit(first, ("register", "a0", 1, {"python"}), 0)
            await compare(first, 0)
            loads = first.projection.loads
            for index, step in enumerate(OTHERS, start=1):
                await commit(second, step, index)
                await until_equal(first)
            table = await first.service.projected("code_review")
            assert {"a0", "a1", "a5", "a6"} <= {c.agent_id for c in table.by_low}
            assert first.projection.loads == loads + 1  # the fit's; no background load
        finally:
            for world in (first, second):
                await world.service.close()
                await world.store.close()

    asyncio.run(main())


def test_on_sqlite_another_instances_commits_arrive_with_its_fit_or_the_background_load(
    tmp_path: Path,
) -> None:
    """Two instances on one SQLite file: the other's commits are in the first's projection
    once the other fits (the next routing reads the store's fit record, finds a fit it
    has not loaded, and loads the fleet again: what an import into a served file needs),
    or else once routing.projection_refresh_s has passed and the background load it
    starts is in place; before either the first routes from what it had."""

    async def main() -> None:
        url = f"sqlite:///{tmp_path / 'shared.db'}"
        first, second = await instance(url, refresh_s=30.0), await instance(url)
        fit_at = OTHERS.index(("fit",))
        try:
            assert not await first.watched.follow()  # SQLite cannot say what others write
            await commit(first, ("register", "a0", 1, {"python"}), 0)
            await compare(first, 0)
            for index, step in enumerate(OTHERS[:fit_at], start=1):
                await commit(second, step, index)
            table = await first.service.projected("code_review")
            assert {c.agent_id for c in table.by_low} == {"a0"}  # not yet
            loads = first.projection.loads
            await commit(second, OTHERS[fit_at], fit_at + 1)  # the other's fit
            await compare(first, 1)
            assert first.projection.loads == loads + 1  # at the next routing
            table = await first.service.projected("code_review")
            assert {c.agent_id for c in table.by_low} == {"a0", "a1", "a5", "a6"}
            before = {c.agent_id: c.low for c in table.by_low}
            for index, step in enumerate(OTHERS[fit_at + 1 :], start=fit_at + 2):
                await commit(second, step, index)  # a judgment of a5, after the fit
            table = await first.service.projected("code_review")
            assert {c.agent_id: c.low for c in table.by_low} == before  # not yet
            for world in (first, second):
                world.clock.advance(30.0)
            await first.service.projected("code_review")  # starts the background load
            await first.projection.refreshed()
            await compare(first, 2)
            assert await first.projection.moment() == first.skill.now()
        finally:
            for world in (first, second):
                await world.service.close()
                await world.store.close()

    asyncio.run(main())


class HeldStore(MemoryStore):
    """A memory store whose registration reads, once ``hold`` is set, return what they
    read only when ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = False
        self.reading = asyncio.Event()
        self.release = asyncio.Event()

    async def get_many_registrations(self, agent_ids: Collection[str]) -> dict[str, Registration]:
        found = await super().get_many_registrations(agent_ids)
        if self.hold:
            self.reading.set()
            await self.release.wait()
        return found


def test_a_heartbeat_stored_while_its_agent_is_read_again_is_not_lost() -> None:
    """An agent marked by a judgment is being read again when its heartbeat is stored:
    the read returns the registration before the heartbeat, and the projection reads the
    agent once more, so it is online as the full read says (not offline from the older
    heartbeat)."""

    async def main() -> None:
        store = HeldStore()
        world = await instance("memory://", opened=store)
        try:
            await commit(world, ("register", "a0", 1, set()), 0)
            await commit(world, ("register", "a1", 1, set()), 0)
            await compare(world, 0)
            await commit(world, ("judge", "a0", "code_review", 7.0, True), 1)
            store.hold = True
            reading = asyncio.ensure_future(world.service.projected("code_review"))
            await store.reading.wait()
            world.clock.advance(40.0)  # the heartbeat before is 40 s old: offline
            await commit(world, ("register", "a0", 1, set()), 2)
            store.hold = False
            store.release.set()
            await reading
            table = await world.service.projected("code_review")
            assert [c.agent_id for c in table.by_low if c.online] == ["a0"]
            await compare(world, 3)
        finally:
            await world.store.close()

    asyncio.run(main())
