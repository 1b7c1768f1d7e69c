"""How fresh a skill answer is: the last fit, the evidence stored after it, and when this
instance's fitter next looks at the log (docs/skill.md, "Between two fits")."""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["FitSchedule", "Freshness"]


@dataclass(frozen=True, slots=True)
class Freshness:
    """``fitted_at``: when the last fit ran (seconds since the epoch; None before the
    first). ``pending``: the skill events stored after the seq that fit read to, the
    evidence the next fit places (each moved the estimates by one filter step, or by none:
    history and feedback). ``next_fit_within_s``: the seconds until this instance's fitter
    next looks at the log and fits it, 0 while a fit runs; None when nothing is pending or
    no fitter runs in this process."""

    fitted_at: float | None
    pending: int
    next_fit_within_s: float | None


class FitSchedule:
    """When the periodic fitter (``services/container.py``) next looks at the log, and
    whether a fit runs now; read by ``Freshness.next_fit_within_s``."""

    def __init__(self) -> None:
        self._next: float | None = None  # time.monotonic() of the next look; None: no fitter

    def next_look_in(self, seconds: float) -> None:
        """The fitter sleeps ``seconds`` before it looks again."""
        self._next = time.monotonic() + seconds

    def stopped(self) -> None:
        """No fitter runs any more."""
        self._next = None

    def within(self, pending: int, running: bool) -> float | None:
        """``Freshness.next_fit_within_s`` for ``pending`` events, a fit running or not."""
        if pending == 0:
            return None
        if running:
            return 0.0
        if self._next is None:
            return None
        return round(max(0.0, self._next - time.monotonic()), 3)
