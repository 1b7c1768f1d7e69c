"""``RoutingService``: gathers what routing needs from the store and the registry, then
chooses with the pure ``route`` (domain/routing/select.py).

For every registered agent: its status, its skill at the task type (the evidence model's
estimate as of now: mean, sd and 95% lower bound, ``skill_view``), its estimated cost
per round (its declared prices), its latency window (its stats: the p90 is computed for
the picks only, which matters at thousands of agents), rank, level and the
complexity its level allows at the task type (its Oracle profile), its declared tags,
and whether it cools down (``HealthMonitor``).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Collection

from agentladder.domain.agents import round_cost
from agentladder.domain.levels import LEVELS
from agentladder.domain.privileges import standing
from agentladder.domain.registry import AgentStatus
from agentladder.domain.routing.rules import RoutingRules
from agentladder.domain.routing.select import Candidate, RoutingTable, route, routing_table
from agentladder.domain.routing.spec import MAX_SEED, RouteSpec, Routing
from agentladder.domain.rules import Complexity, OracleRules
from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.state import new_skill
from agentladder.errors import TooFewAgents
from agentladder.services.agents.registry import Registry
from agentladder.services.routing.health import HealthMonitor
from agentladder.services.skill.service import SkillService
from agentladder.store.base import Store

__all__ = ["RoutingService", "fresh_seed", "require_enough"]


def require_enough(routing: Routing, needed: int) -> None:
    """``TooFewAgents`` (400 ``too_few_agents``, with the excluded agents) when fewer than
    ``needed`` agents qualified."""
    if not routing.enough:
        raise TooFewAgents(
            [p.agent_id for p in routing.agents],
            [e.model_dump(mode="json") for e in routing.excluded],
            needed=needed,
        )


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
    ) -> None:
        self.store = store
        self.registry = registry
        self.skill = skill
        self.oracle_rules = oracle_rules or OracleRules()
        self.health = health
        self.rules = rules or RoutingRules()

    async def table(
        self, task_type: str | None, reachable: Collection[str] | None = None
    ) -> RoutingTable:
        """Every registered agent as a candidate at ``task_type`` (overall when None);
        ``reachable``: the agents this server can ask (None: all)."""
        views = await self.registry.list()
        ids = [view.agent_id for view in views]
        skills, fleet, stats, profiles = await asyncio.gather(
            self.store.get_skills(ids),
            self.store.get_fleet_skill(),
            self.store.get_many_stats(ids),
            self.store.get_many_profiles(ids),
        )
        now = self.skill.now()
        rules = self.skill.rules
        cooling = {} if self.health is None else self.health.cooling()
        table = self.oracle_rules.privileges  # the complexity each level may take
        allowed = {level: table.for_level(level).max_complexity for level in LEVELS}
        blank = skill_view(new_skill("-", rules), fleet, task_type, now, rules)  # no evidence
        candidates = []
        for view in views:
            agent = view.agent_id
            state = skills.get(agent)
            entry = blank if state is None else skill_view(state, fleet, task_type, now, rules)
            found = profiles.get(agent)
            level = standing(None if found is None else found.value, task_type)
            performance = stats.get(agent)
            cooldown = cooling.get(agent)
            config = view.registration.config
            candidate = Candidate(
                agent_id=agent, skill=entry.skill, sd=entry.sd, low=entry.low,
                observations=entry.observations,
                cost=round_cost(config.input_price_per_mtok, config.output_price_per_mtok),
                latencies_ms=() if performance is None else performance.value.recent_latencies_ms,
                online=view.status is AgentStatus.ONLINE,
                reachable=reachable is None or agent in reachable,
                cooldown_until=None if cooldown is None else cooldown.until,
                rank=0 if performance is None else performance.value.rank,
                level=level, max_complexity=allowed[level],
                tags=frozenset(config.capability_tags),
            )  # fmt: skip
            candidates.append(candidate)
        return routing_table(candidates, self.rules.explore_tail_sd)

    async def route(
        self,
        spec: RouteSpec,
        *,
        complexity: Complexity | None = None,
        min_rank: int = 0,
        reachable: Collection[str] | None = None,
        seed: int | None = None,
    ) -> Routing:
        """Choose ``spec.count`` agents (``enough`` false when fewer qualify). The seed:
        the spec's, else ``seed``, else a fresh one; the answer names it."""
        table = await self.table(spec.task_type, reachable)
        chosen = spec.seed if spec.seed is not None else seed
        return route(
            table, spec, now=self.skill.now(), seed=fresh_seed() if chosen is None else chosen,
            rules=self.rules, complexity=complexity, min_rank=min_rank,
        )  # fmt: skip
