"""``HealthMonitor``: every provider call's outcome, per agent, and the cooldowns they start.

The orchestrator's rounds report each propose and evaluate call here; routing skips an
agent while it cools down. The states live in this instance's memory: each instance
cools an agent down on the calls it made itself (see docs/routing.md).
"""

from __future__ import annotations

from agentladder.domain.routing.health import Cooldown, Health, cooldown_of, record_call
from agentladder.domain.routing.rules import RoutingRules
from agentladder.services.clock import Clock, SystemClock

__all__ = ["HealthMonitor"]


class HealthMonitor:
    """Provider calls in, cooldowns out, on one clock."""

    def __init__(self, rules: RoutingRules | None = None, clock: Clock | None = None) -> None:
        self.rules = rules or RoutingRules()
        self.clock = clock or SystemClock()
        self._states: dict[str, Health] = {}
        self.started = 0  # cooldowns started by this instance, for /metrics

    def now(self) -> float:
        """The clock's time in seconds."""
        return self.clock.now().timestamp()

    def record(
        self, agent_id: str, *, ok: bool, error: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:  # fmt: skip
        """One call to ``agent_id`` succeeded (``ok``) or failed with ``error``."""
        before = self._states.get(agent_id, Health())
        after = record_call(
            before, ok=ok, now=self.now(), rules=self.rules, error=error,
            retry_after_s=retry_after_s,
        )  # fmt: skip
        if after.cooldowns > before.cooldowns:
            self.started += 1
        if after != before:
            self._states[agent_id] = after

    def cooldown(self, agent_id: str) -> Cooldown | None:
        """The agent's cooldown in force now, if any."""
        found = self._states.get(agent_id)
        return None if found is None else cooldown_of(found, self.now())

    def cooling(self) -> dict[str, Cooldown]:
        """Every agent cooling down now, with its cooldown."""
        now = self.now()
        found = {agent: cooldown_of(state, now) for agent, state in self._states.items()}
        return {agent: cooldown for agent, cooldown in found.items() if cooldown is not None}
