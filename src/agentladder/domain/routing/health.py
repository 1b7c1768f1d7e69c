"""Health cooldowns: an agent whose provider calls keep failing is skipped for a while.

``record_call`` folds one call's outcome into an agent's ``Health``. A cooldown starts
when ``cooldown_after_failures`` calls in a row failed, when at least
``cooldown_min_calls`` of the last ``cooldown_window`` calls are known and
``cooldown_error_share`` of them failed, or at once when a failed call carried a
provider's Retry-After; only a failed call starts one. It lasts ``cooldown_s`` (a
Retry-After: as long as asked, or ``cooldown_s`` when the failures alone started it and
that is longer), never more than ``max_cooldown_s``, and ends by itself: from its end
the agent starts with a clean record. Outcomes of calls made while it cools down
(deliberations already under way) are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from agentladder.domain.routing.rules import RoutingRules

__all__ = ["Cooldown", "Health", "cooldown_of", "record_call"]


@dataclass(frozen=True, slots=True)
class Health:
    """What the calls to one agent have shown since its last cooldown."""

    failures_in_row: int = 0
    recent: tuple[bool, ...] = ()  # True: the call failed; the last ``cooldown_window``
    cooldown_from: float | None = None
    cooldown_until: float | None = None
    cooldown_reason: str | None = None
    cooldowns: int = 0
    last_error: str | None = None


class Cooldown(BaseModel):
    """A cooldown in force: since when, until when, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    since: float
    until: float
    reason: str
    last_error: str | None = None


def cooldown_of(health: Health, now: float) -> Cooldown | None:
    """The cooldown in force at ``now``, if any."""
    if health.cooldown_until is None or health.cooldown_until <= now:
        return None
    return Cooldown(
        since=health.cooldown_from if health.cooldown_from is not None else now,
        until=health.cooldown_until,
        reason=health.cooldown_reason or "",
        last_error=health.last_error,
    )


def record_call(
    health: Health,
    *,
    ok: bool,
    now: float,
    rules: RoutingRules,
    error: str | None = None,
    retry_after_s: float | None = None,
) -> Health:
    """The agent's health after one call at ``now`` (``ok`` or failed with ``error``)."""
    if health.cooldown_until is not None:
        if now < health.cooldown_until:
            return health  # cooling down: calls already under way do not count
        health = Health(cooldowns=health.cooldowns, last_error=health.last_error)
    recent = (*health.recent, not ok)[-rules.cooldown_window :]
    in_row = 0 if ok else health.failures_in_row + 1
    last_error = health.last_error if ok else error
    failed = sum(recent)
    length: float | None = None
    reason = ""
    if in_row >= rules.cooldown_after_failures:
        length, reason = rules.cooldown_s, f"{in_row} failed calls in a row"
    elif (
        not ok
        and len(recent) >= rules.cooldown_min_calls
        and failed / len(recent) >= (rules.cooldown_error_share)
    ):
        length, reason = rules.cooldown_s, f"{failed} of the last {len(recent)} calls failed"
    if not ok and retry_after_s is not None and retry_after_s > 0:
        asked = f"the provider asked to retry after {retry_after_s:g} s"
        length = retry_after_s if length is None else max(length, retry_after_s)
        reason = asked if not reason else f"{reason}; {asked}"
    if length is None:
        return Health(
            failures_in_row=in_row, recent=recent, cooldowns=health.cooldowns,
            last_error=last_error,
        )  # fmt: skip
    return Health(
        cooldown_from=now,
        cooldown_until=now + min(length, rules.max_cooldown_s),
        cooldown_reason=reason,
        cooldowns=health.cooldowns + 1,
        last_error=last_error,
    )
