"""Clocks: the wall clock for the service, a settable one for tests and simulations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = ["Clock", "FixedClock", "SystemClock", "iso"]


class Clock(Protocol):
    """Tells the time, always timezone-aware UTC."""

    def now(self) -> datetime:
        """The current time."""
        ...


class SystemClock:
    """The machine's clock."""

    def now(self) -> datetime:
        """``datetime.now(UTC)``."""
        return datetime.now(UTC)


class FixedClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        """The time it was set to."""
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self._now += timedelta(seconds=seconds)


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with seconds precision: ``2026-01-01T00:00:00+00:00``."""
    return moment.astimezone(UTC).isoformat(timespec="seconds")
