"""Agent health: ``ok``, ``degraded`` or ``down``, from the calls this instance made to the
agent's provider. Not the heartbeat's ``online``: an agent can be online and down.

A circuit breaker per agent, as resilience4j keeps one (closed, open, half-open), with
Envoy's outlier ejection backoff:

- **closed**: every call enters a window of the last ``cooldown_window`` calls. The agent
  is ``degraded`` while at least ``degraded_min_calls`` of them are known and more than
  ``degraded_error_share`` of them failed, else ``ok``.
- **open** (``down``): a failed call opens the breaker when ``cooldown_after_failures``
  calls in a row failed, when at least ``cooldown_min_calls`` of the window are known and
  ``cooldown_error_share`` of them failed, or when the failure carried the provider's
  Retry-After. It stays open ``cooldown_s`` doubled at each opening in a row
  (``cooldown_s * 2 ** (k - 1)`` for the k-th with no answered call between), for a
  Retry-After as long as asked (the longer of the two when both apply), never more than
  ``max_cooldown_s``. Outcomes of calls made while it is open (already under way) are not
  counted.
- **half-open**: once that time is over the agent is ``degraded`` ("recovering") and the
  next call decides: answered, the breaker closes with a clean window (``ok``); failed,
  it opens again for the next, doubled, period.
- **pinned**: an agent that cannot work until the service restarts (its API key variable
  is missing) is ``down`` from the start, whatever its calls do.

``record_call`` folds one call into the state, ``health_of`` says what the state means at
a moment, ``call_share`` is the share of calls it answers for routing's ranking of a
degraded agent (docs/routing.md, "Health").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.routing.rules import RoutingRules

__all__ = [
    "HALF_OPEN_SHARE",
    "AgentHealth",
    "Cooldown",
    "Health",
    "HealthStatus",
    "call_share",
    "cooldown_of",
    "health_of",
    "pinned",
    "record_call",
]

HALF_OPEN_SHARE = 0.5
"""The call share routing gives a recovering (half-open) agent: its next call decides."""


class HealthStatus(StrEnum):
    """What the calls to an agent show."""

    OK = "ok"
    DEGRADED = "degraded"
    DOWN = "down"


@dataclass(frozen=True, slots=True)
class Health:
    """What the calls to one agent have shown (the breaker's state)."""

    failures_in_row: int = 0
    recent: tuple[bool, ...] = ()  # True: the call failed; the last ``cooldown_window``
    evaluations: tuple[bool, ...] = ()  # the same for its evaluate calls only
    since: float | None = None  # closed: when its status (ok or degraded) began
    degraded: bool = False  # closed: the status since ``since``
    down_from: float | None = None
    down_until: float | None = None  # open until then; half-open after, until a call
    down_reason: str | None = None
    openings: int = 0  # openings in a row with no answered call between (the backoff)
    cooldowns: int = 0  # openings in all
    retry_not_before: float | None = None  # the provider's Retry-After: no call before
    last_error: str | None = None
    pinned: str | None = None  # down until a restart, and why


class Cooldown(BaseModel):
    """A down period with an end: since when, until when, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    since: float
    until: float
    reason: str
    last_error: str | None = None


class AgentHealth(BaseModel):
    """An agent's health now: its status, why, since when, and the calls behind it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: HealthStatus
    reason: str
    since: float | None = Field(description="when the status began (none before any call)")
    until: float | None = Field(
        default=None, description="down: when the next call may decide (none: until a restart)"
    )
    calls: int = Field(default=0, description="calls in the window")
    failed: int = Field(default=0, description="of them, failed")
    evaluations: int = Field(default=0, description="evaluate calls in their window")
    evaluations_failed: int = Field(default=0, description="of them, failed")
    last_error: str | None = None


def pinned(health: Health, reason: str, now: float) -> Health:
    """Down from ``now`` until a restart, for ``reason`` (a missing API key)."""
    return replace(health, pinned=reason, down_from=now, down_reason=reason)


def _length(rules: RoutingRules, openings: int) -> float:
    """How long the ``openings``-th opening in a row lasts (doubling, capped)."""
    return min(rules.max_cooldown_s, rules.cooldown_s * 2.0 ** min(openings - 1, 60))


def _open(
    health: Health, now: float, rules: RoutingRules, openings: int, reason: str,
    retry_after_s: float | None, by_failures: bool,
) -> Health:  # fmt: skip
    length = _length(rules, openings) if by_failures else 0.0
    if retry_after_s is not None and retry_after_s > 0:
        asked = f"the provider asked to retry after {retry_after_s:g} s"
        reason = asked if not reason else f"{reason}; {asked}"
        length = max(length, retry_after_s)
    return replace(
        health, failures_in_row=0, down_from=now,
        down_until=now + min(length, rules.max_cooldown_s), down_reason=reason,
        openings=openings, cooldowns=health.cooldowns + 1, since=None,
    )  # fmt: skip


def _degraded(recent: tuple[bool, ...], rules: RoutingRules) -> bool:
    failed = sum(recent)
    return len(recent) >= rules.degraded_min_calls and failed > rules.degraded_error_share * len(
        recent
    )


def record_call(
    health: Health,
    *,
    ok: bool,
    now: float,
    rules: RoutingRules,
    error: str | None = None,
    retry_after_s: float | None = None,
    evaluation: bool = False,
) -> Health:
    """The agent's health after one call at ``now`` (``ok``, or failed with ``error``; an
    ``evaluation`` or a proposal)."""
    last_error = health.last_error if ok else error
    not_before = health.retry_not_before
    if not ok and retry_after_s is not None and retry_after_s > 0:
        asked = now + min(retry_after_s, rules.max_cooldown_s)
        not_before = asked if not_before is None else max(not_before, asked)
    if health.pinned is not None:
        return replace(health, last_error=last_error, retry_not_before=not_before)
    if health.down_until is not None and now < health.down_until:  # open
        until = health.down_until
        if not_before is not None and not_before > until:
            until = not_before  # the provider asked for longer
        return replace(health, down_until=until, retry_not_before=not_before)
    window = rules.cooldown_window
    if health.down_until is not None:  # half-open: this call decides
        if ok:
            return Health(
                recent=(False,), evaluations=(False,) if evaluation else (), since=now,
                cooldowns=health.cooldowns, retry_not_before=not_before, last_error=last_error,
            )  # fmt: skip
        reason = "the first call after it was down failed too"
        state = replace(health, last_error=last_error, retry_not_before=not_before)
        return _open(state, now, rules, health.openings + 1, reason, retry_after_s, True)
    recent = (*health.recent, not ok)[-window:]
    evaluations = (*health.evaluations, not ok)[-window:] if evaluation else health.evaluations
    in_row = 0 if ok else health.failures_in_row + 1
    failed = sum(recent)
    state = replace(
        health, failures_in_row=in_row, recent=recent, evaluations=evaluations,
        last_error=last_error, retry_not_before=not_before,
    )  # fmt: skip
    reason = ""
    if not ok and in_row >= rules.cooldown_after_failures:
        reason = f"{in_row} failed calls in a row"
    elif (
        not ok
        and len(recent) >= rules.cooldown_min_calls
        and failed >= rules.cooldown_error_share * len(recent)
    ):
        reason = f"{failed} of the last {len(recent)} calls failed"
    asked = not ok and retry_after_s is not None and retry_after_s > 0
    if reason or asked:
        return _open(state, now, rules, 1, reason, retry_after_s, bool(reason))
    degraded = _degraded(recent, rules)
    if health.since is None or degraded != health.degraded:
        state = replace(state, since=now, degraded=degraded)
    return state


def cooldown_of(health: Health, now: float) -> Cooldown | None:
    """The down period in force at ``now`` with its end, if any (a pinned agent has none)."""
    if health.pinned is not None or health.down_until is None or health.down_until <= now:
        return None
    return Cooldown(
        since=health.down_from if health.down_from is not None else now,
        until=health.down_until,
        reason=health.down_reason or "",
        last_error=health.last_error,
    )


def health_of(health: Health, now: float, rules: RoutingRules) -> AgentHealth:
    """What ``health`` means at ``now``: down (pinned, or open), degraded (recovering, or
    an error share over ``degraded_error_share``), or ok."""
    count, failed = len(health.recent), sum(health.recent)
    figures = AgentHealth(
        status=HealthStatus.OK, reason="", since=health.since, calls=count, failed=failed,
        evaluations=len(health.evaluations), evaluations_failed=sum(health.evaluations),
        last_error=health.last_error,
    )  # fmt: skip
    if health.pinned is not None:
        status, reason, since, until = HealthStatus.DOWN, health.pinned, health.down_from, None
    elif health.down_until is not None and now < health.down_until:
        status, reason = HealthStatus.DOWN, health.down_reason or ""
        since, until = health.down_from, health.down_until
    elif health.down_until is not None:
        status, since, until = HealthStatus.DEGRADED, health.down_until, None
        reason = f"recovering: was down ({health.down_reason}); the next call decides"
    elif _degraded(health.recent, rules):
        status, since, until = HealthStatus.DEGRADED, health.since, None
        reason = (
            f"{failed} of the last {count} calls failed (more than"
            f" {rules.degraded_error_share:.0%})"
        )
    else:
        status, since, until = HealthStatus.OK, health.since, None
        reason = f"{count - failed} of the last {count} calls answered" if count else "no call yet"
    return figures.model_copy(
        update={"status": status, "reason": reason, "since": since, "until": until}
    )


def call_share(health: Health, now: float, rules: RoutingRules) -> float:
    """The share of its calls an agent answers, as routing ranks a degraded agent by it:
    1 when ok, ``HALF_OPEN_SHARE`` while recovering, the window's answered share when
    degraded by its errors, 0 when down."""
    status = health_of(health, now, rules)
    if status.status is HealthStatus.OK:
        return 1.0
    if status.status is HealthStatus.DOWN:
        return 0.0
    if health.down_until is not None:
        return HALF_OPEN_SHARE
    return (status.calls - status.failed) / status.calls
