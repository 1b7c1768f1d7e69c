"""``HealthMonitor``: every provider call's outcome, per agent, and the health it shows
(``domain/routing/health.py``: ok, degraded, down).

The orchestrator's rounds report each propose and evaluate call here; routing skips an
agent while it is down and ranks a degraded one by the share of calls it answers. An
agent whose API key variable is missing is pinned down from the start (``pin``). The
states live in this instance's memory: each instance judges an agent's health on the calls
it made itself (see docs/routing.md).
"""

from __future__ import annotations

from agentladder.domain.routing.health import (
    AgentHealth,
    Cooldown,
    Health,
    HealthStatus,
    call_share,
    cooldown_of,
    health_of,
    pinned,
    record_call,
)
from agentladder.domain.routing.rules import RoutingRules
from agentladder.redaction import scrub
from agentladder.services.clock import Clock, SystemClock

__all__ = ["HealthMonitor"]


class HealthMonitor:
    """Provider calls in, health out, on one clock."""

    def __init__(self, rules: RoutingRules | None = None, clock: Clock | None = None) -> None:
        self.rules = rules or RoutingRules()
        self.clock = clock or SystemClock()
        self._states: dict[str, Health] = {}
        self._suspects: set[str] = set()  # the agents whose state is not a clean ok
        self.started = 0  # down periods started by this instance, for /metrics

    def now(self) -> float:
        """The clock's time in seconds."""
        return self.clock.now().timestamp()

    def record(
        self, agent_id: str, *, ok: bool, error: str | None = None,
        retry_after_s: float | None = None, evaluation: bool = False,
    ) -> None:  # fmt: skip
        """One call to ``agent_id`` (an ``evaluation`` or a proposal) succeeded (``ok``)
        or failed with ``error`` (redacted: ``redaction.py``)."""
        before = self._states.get(agent_id, Health())
        error = None if error is None else scrub(error)  # shown by GET /agents
        after = record_call(
            before, ok=ok, now=self.now(), rules=self.rules, error=error,
            retry_after_s=retry_after_s, evaluation=evaluation,
        )  # fmt: skip
        if after.cooldowns > before.cooldowns:
            self.started += 1
        if after != before:
            self._states[agent_id] = after
            self._mark(agent_id, after)

    def _mark(self, agent_id: str, state: Health) -> None:
        if state.pinned is None and state.down_until is None and not any(state.recent):
            self._suspects.discard(agent_id)
        else:
            self._suspects.add(agent_id)

    def suspects(self) -> list[str]:
        """The agents that may be degraded or down now (pinned, down or recovering, or
        with a failed call in their window); every other agent is ok with a share of 1."""
        return sorted(self._suspects)

    def pin(self, agent_id: str, reason: str) -> None:
        """``agent_id`` is down until the service restarts, for ``reason``."""
        self._states[agent_id] = pinned(self._states.get(agent_id, Health()), reason, self.now())
        self._suspects.add(agent_id)

    def health(self, agent_id: str) -> AgentHealth:
        """The agent's health now (ok, with no call yet, for an agent never asked)."""
        return health_of(self._states.get(agent_id, Health()), self.now(), self.rules)

    def tracked(self, agent_id: str) -> AgentHealth | None:
        """The agent's health now, or None for an agent this instance never called (and
        never pinned): its health is then ok, with no call yet."""
        found = self._states.get(agent_id)
        return None if found is None else health_of(found, self.now(), self.rules)

    def share(self, agent_id: str) -> float:
        """The share of its calls the agent answers, as routing weighs it (``call_share``)."""
        return call_share(self._states.get(agent_id, Health()), self.now(), self.rules)

    def unhealthy(self) -> dict[str, AgentHealth]:
        """Every agent degraded or down now, with its health."""
        now = self.now()
        found = {agent: health_of(state, now, self.rules) for agent, state in self._states.items()}
        return {a: h for a, h in found.items() if h.status is not HealthStatus.OK}

    def retry_wait_s(self, agent_id: str) -> float:
        """How long until the agent's provider may be called again, as its last Retry-After
        asked (0 when nothing was asked, or the time is past)."""
        found = self._states.get(agent_id)
        if found is None or found.retry_not_before is None:
            return 0.0
        return max(0.0, found.retry_not_before - self.now())

    def cooldown(self, agent_id: str) -> Cooldown | None:
        """The agent's down period in force now with its end, if any."""
        found = self._states.get(agent_id)
        return None if found is None else cooldown_of(found, self.now())

    def cooling(self) -> dict[str, Cooldown]:
        """Every agent in a down period with an end now, with it."""
        now = self.now()
        found = {agent: cooldown_of(state, now) for agent, state in self._states.items()}
        return {agent: cooldown for agent, cooldown in found.items() if cooldown is not None}
