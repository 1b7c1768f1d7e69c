"""What the routing projection keeps of each agent (``Facts``: the few values of its
registration, stats, Oracle profile and skill state that routing reads), and how it
makes a ``Candidate`` of them at a task type, exactly as the full read
(``RoutingService.table``) does from the stored records."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from agentladder.domain.agents import round_cost
from agentladder.domain.levels import LEVELS, Level
from agentladder.domain.privileges import standing
from agentladder.domain.profile import AgentProfile
from agentladder.domain.routing.select import Candidate
from agentladder.domain.rules import MaxComplexity, OracleRules
from agentladder.domain.skill.board import skill_view
from agentladder.domain.skill.rules import SkillRules
from agentladder.domain.skill.state import AgentSkill, FleetSkill, new_skill
from agentladder.domain.stats import AgentPerformanceStats
from agentladder.store.records import Registration, Versioned

__all__ = ["Facts", "Maker", "facts_of", "with_registration"]


@dataclass(frozen=True, slots=True)
class Facts:
    """One agent as routing needs it, whatever the task type."""

    last_seen: float | None  # None: never heartbeated (known by its evidence alone)
    cost: float
    tags: frozenset[str]
    rank: int
    latencies_ms: tuple[float, ...]
    level: Level  # overall
    levels: dict[str, Level] = field(default_factory=dict)  # per specialization
    skill: AgentSkill | None = None  # without its history (routing does not read it)


def facts_of(
    registration: Registration | None,
    skill: AgentSkill | None,
    stats: Versioned[AgentPerformanceStats] | None,
    profile: Versioned[AgentProfile] | None,
) -> Facts | None:
    """The agent's facts, or None when it is no candidate (neither registered nor known
    by its evidence)."""
    if registration is None and skill is None:
        return None
    found = None if profile is None else profile.value
    cost, tags = _declared(registration)
    return Facts(
        last_seen=None if registration is None else registration.last_seen,
        cost=cost,
        tags=tags,
        rank=0 if stats is None else stats.value.rank,
        latencies_ms=() if stats is None else stats.value.recent_latencies_ms,
        level=standing(found, None),
        levels={} if found is None else {t: standing(found, t) for t in found.specializations},
        skill=None if skill is None else replace(skill, history=()),
    )  # fmt: skip


def _declared(registration: Registration | None) -> tuple[float, frozenset[str]]:
    """The cost per round and the tags an agent declares (none: no prices, no tags)."""
    if registration is None:
        return math.inf, frozenset()
    config = registration.config
    cost = round_cost(config.input_price_per_mtok, config.output_price_per_mtok)
    return cost, frozenset(config.capability_tags)


def with_registration(facts: Facts, registration: Registration) -> Facts:
    """The agent's facts with a new registration (a heartbeat, maybe a new declaration)."""
    cost, tags = _declared(registration)
    return replace(facts, last_seen=registration.last_seen, cost=cost, tags=tags)


class Maker:
    """Makes the candidates of one fleet state, as of one moment."""

    def __init__(
        self, fleet: FleetSkill, at: float, rules: SkillRules, oracle_rules: OracleRules
    ) -> None:
        self.fleet = fleet
        self.at = at
        self.rules = rules
        table = oracle_rules.privileges  # the complexity each level may take
        self.allowed: dict[Level, MaxComplexity] = {
            level: table.for_level(level).max_complexity for level in LEVELS
        }
        self._blank: dict[str | None, tuple[float, float, float, int]] = {}

    def _numbers(
        self, skill: AgentSkill | None, task_type: str | None
    ) -> tuple[float, float, float, int]:
        if skill is None:  # no evidence: the same for every such agent
            found = self._blank.get(task_type)
            if found is None:
                found = self._numbers(new_skill("-", self.rules), task_type)
                self._blank[task_type] = found
            return found
        entry = skill_view(skill, self.fleet, task_type, self.at, self.rules)
        return entry.skill, entry.sd, entry.low, entry.observations

    def candidate(self, agent: str, facts: Facts, task_type: str | None) -> Candidate:
        """The agent at ``task_type`` (overall when None), online, reachable and healthy:
        what a call may change is set when the call reads it."""
        skill, sd, low, observations = self._numbers(facts.skill, task_type)
        level = facts.level if task_type is None else facts.levels.get(task_type, Level.ROOKIE)
        return Candidate(
            agent_id=agent, skill=skill, sd=sd, low=low,
            observations=observations, cost=facts.cost, latencies_ms=facts.latencies_ms,
            registered=facts.last_seen is not None, rank=facts.rank, level=level,
            max_complexity=self.allowed[level], tags=facts.tags,
        )  # fmt: skip
