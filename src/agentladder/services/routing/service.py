"""``RoutingService``: gathers what routing needs from the store and the registry, then
chooses with the pure ``route`` (domain/routing/select.py).

For every registered agent (and, for work the caller runs itself, every agent known by
its evidence): its status, its skill at the task type (the evidence model's estimate as
of now: mean, sd and 95% lower bound, ``skill_view``), its estimated cost per round (its
declared prices; none for an agent that never declared any), its latency window (its
stats: the p90 is computed for the picks only, which matters at thousands of agents),
rank, level and the complexity its level allows at the task type (its Oracle profile),
its declared tags, and its health (``HealthMonitor``): a down agent is left out, a
degraded one enters with its skill times the share of calls it answers.

``table`` reads all of that from the store on each call (the full read). With a
``RoutingProjection`` (``projection.py``), ``route`` reads the same from the projection
kept in memory instead, and only as far down the orders as it must; the answers are the
same (docs/routing.md, "The projection").

A routing at a task type no agent has evidence at still chooses (on predicted skill), and
its answer warns of it, with the closest known task types (``Routing.warnings``,
``domain/routing/warnings.py``).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Collection

from agentladder.domain.agents import round_cost
from agentladder.domain.levels import LEVELS
from agentladder.domain.privileges import standing
from agentladder.domain.registry import AgentStatus
from agentladder.domain.routing.health import HealthStatus
from agentladder.domain.routing.rules import RoutingRules
from agentladder.domain.routing.select import Candidate, RoutingTable, route, routing_table
from agentladder.domain.routing.spec import MAX_SEED, RouteSpec, Routing
from agentladder.domain.routing.warnings import no_evidence
from agentladder.domain.rules import Complexity, OracleRules
from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.state import new_skill
from agentladder.domain.suggestions import Names
from agentladder.errors import TooFewAgents
from agentladder.services.agents.registry import Registry
from agentladder.services.routing.health import HealthMonitor
from agentladder.services.routing.projection import RoutingProjection
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store

__all__ = ["MAX_WARNED", "TYPES_RELOAD_S", "RoutingService", "fresh_seed", "require_enough"]

TYPES_RELOAD_S = 1.0
"""The least time between two reads of the task types with evidence (``task_types``)."""
MAX_WARNED = 1024
"""The task types without evidence whose warning is kept between two reads."""


def require_enough(routing: Routing, needed: int, what: str = "a deliberation") -> None:
    """``TooFewAgents`` (400 ``too_few_agents``, with the excluded agents) when fewer than
    ``needed`` agents qualified for ``what``."""
    if not routing.enough:
        raise TooFewAgents(
            [p.agent_id for p in routing.agents],
            [e.model_dump(mode="json") for e in routing.excluded],
            needed=needed, what=what,
        )  # fmt: skip


def fresh_seed() -> int:
    """A seed nobody chose (the routing answer says which, so it can be repeated)."""
    return random.SystemRandom().randrange(MAX_SEED)


class RoutingService:
    """Chooses agents for tasks."""

    def __init__(
        self,
        *,
        store: Store,
        registry: Registry,
        skill: SkillService,
        oracle_rules: OracleRules | None = None,
        health: HealthMonitor | None = None,
        rules: RoutingRules | None = None,
        projection: RoutingProjection | None = None,
    ) -> None:
        self.store = store
        self.registry = registry
        self.skill = skill
        self.oracle_rules = oracle_rules or OracleRules()
        self.health = health
        self.rules = rules or RoutingRules()
        self.projection = projection
        self._types: frozenset[str] = frozenset()
        self._names = Names(())
        self._warned: dict[str, str | None] = {}
        self._types_read_at: float | None = None

    async def close(self) -> None:
        """Stop the projection's background load, if one is in flight."""
        if self.projection is not None:
            await self.projection.close()

    async def projected(
        self,
        task_type: str | None,
        reachable: Collection[str] | None = None,
        *,
        online_only: bool = True,
    ) -> RoutingTable:
        """``table``'s answer from the projection (the full read without one). Read it
        before the next await: it reads the projection as it is."""
        if self.projection is None:
            return await self.table(task_type, reachable, online_only=online_only)
        return await self.projection.table(
            task_type, reachable, online_only=online_only, health=self.health
        )

    async def table(
        self,
        task_type: str | None,
        reachable: Collection[str] | None = None,
        *,
        online_only: bool = True,
    ) -> RoutingTable:
        """Every registered agent, and every agent known by its evidence alone (a skill
        state, no registration: imported history), as a candidate at ``task_type``
        (overall when None); ``reachable``: the agents this server can ask (None: all).
        With ``online_only``, only agents heartbeating now are available (the others are
        left out as offline); without it (the caller runs the work itself), an agent with
        evidence is available whatever its heartbeat."""
        views = await self.registry.list()
        ids = [view.agent_id for view in views]
        skills = {state.agent_id: state for state in await self.store.list_skills()}
        registered = set(ids)
        ids += sorted(agent for agent in skills if agent not in registered)
        fleet, stats, profiles = await asyncio.gather(
            self.store.get_fleet_skill(),
            self.store.get_many_stats(ids),
            self.store.get_many_profiles(ids),
        )
        now = self.skill.now()
        rules = self.skill.rules
        table = self.oracle_rules.privileges  # the complexity each level may take
        allowed = {level: table.for_level(level).max_complexity for level in LEVELS}
        blank = skill_view(new_skill("-", rules), fleet, task_type, now, rules)  # no evidence
        by_id = {view.agent_id: view for view in views}
        candidates = []
        for agent in ids:
            state = skills.get(agent)
            entry = blank if state is None else skill_view(state, fleet, task_type, now, rules)
            found = profiles.get(agent)
            level = standing(None if found is None else found.value, task_type)
            performance = stats.get(agent)
            view = by_id.get(agent)
            config = None if view is None else view.registration.config
            online = view is not None and view.status is AgentStatus.ONLINE
            if not online_only and entry.observations > 0:
                online = True  # known by its evidence: the caller runs the work
            down, share = self._health(agent)
            candidate = Candidate(
                agent_id=agent, skill=entry.skill * share, sd=entry.sd * share,
                low=entry.low * share, observations=entry.observations,
                cost=(
                    math.inf if config is None
                    else round_cost(config.input_price_per_mtok, config.output_price_per_mtok)
                ),
                latencies_ms=() if performance is None else performance.value.recent_latencies_ms,
                online=online, registered=view is not None,
                reachable=reachable is None or agent in reachable,
                down=down, share=share,
                rank=0 if performance is None else performance.value.rank,
                level=level, max_complexity=allowed[level],
                tags=frozenset(() if config is None else config.capability_tags),
            )  # fmt: skip
            candidates.append(candidate)
        return routing_table(candidates, self.rules.explore_tail_sd)

    def _health(self, agent: str) -> tuple[str | None, float]:
        """Why the agent is down (None when it is not), and the share of its calls it
        answers (1 when ok; ``domain/routing/health.call_share``)."""
        if self.health is None:
            return None, 1.0
        health = self.health.health(agent)
        if health.status is HealthStatus.DOWN:
            return health.reason, 1.0
        return None, self.health.share(agent)

    async def route(
        self,
        spec: RouteSpec,
        *,
        complexity: Complexity | None = None,
        min_rank: int = 0,
        reachable: Collection[str] | None = None,
        seed: int | None = None,
        online_only: bool = True,
    ) -> Routing:
        """Choose ``spec.count`` agents (``enough`` false when fewer qualify). The seed:
        the spec's, else ``seed``, else a fresh one; the answer names it. ``online_only``
        false: for work the caller runs itself (``table``)."""
        table = await self.projected(spec.task_type, reachable, online_only=online_only)
        chosen = spec.seed if spec.seed is not None else seed
        routing = route(
            table, spec, now=self.skill.now(), seed=fresh_seed() if chosen is None else chosen,
            rules=self.rules, complexity=complexity, min_rank=min_rank,
        )  # fmt: skip
        warning = await self._warning(spec.task_type)
        return routing if warning is None else routing.model_copy(update={"warnings": [warning]})

    async def _warning(self, wanted: str | None) -> str | None:
        """``no_evidence``'s warning for routing at ``wanted``, kept per task type until the
        task types are read again (a new task type's requests compute it once)."""
        if wanted is None or wanted in self._types:
            return None
        await self.task_types()
        if wanted not in self._warned:
            if len(self._warned) >= MAX_WARNED:
                self._warned.clear()
            self._warned[wanted] = no_evidence(wanted, self._names)
        return self._warned[wanted]

    async def task_types(self) -> frozenset[str]:
        """The task types agents have evidence at (judged at: ``Store.task_types``, and the
        fleet's levels), read at most once every ``TYPES_RELOAD_S`` (``route`` asks only for
        a type not among those read before: a routing at a known task type reads nothing)."""
        now = time.monotonic()
        if self._types_read_at is None or now - self._types_read_at >= TYPES_RELOAD_S:
            judged, fleet = await asyncio.gather(
                self.store.task_types(), self.store.get_fleet_skill()
            )
            self._types = judged | frozenset(fleet.levels)
            self._names = Names(self._types)
            self._warned.clear()
            self._types_read_at = now
        return self._types
