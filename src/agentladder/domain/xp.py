"""XP of one judged task, itemized: one line per rule that paid.

The order is the specification's award process: base (task completed, first try),
quality (the highest tier reached only), efficiency (under budget, fast), streak.
A failed task pays nothing and resets the streak; nothing is ever negative.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentladder.domain.frozen import built
from agentladder.domain.judgment import Judgment
from agentladder.domain.rules import XPTable

__all__ = ["XPLine", "streak_after", "task_xp_lines"]


class XPLine(BaseModel):
    """One rule that paid: the event's name and its XP."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event: str
    xp: int = Field(ge=0)


def streak_after(streak: int, success: bool) -> int:
    """The consecutive-success count after one more task."""
    return streak + 1 if success else 0


def _line(event: str, xp: int) -> XPLine:
    """A line of the table's (validated) XP: built without validating it again."""
    return built(XPLine, event=event, xp=xp)


def task_xp_lines(judgment: Judgment, streak_before: int, table: XPTable) -> tuple[XPLine, ...]:
    """The itemized XP of ``judgment`` for an agent whose streak was ``streak_before``.

    Lines paying 0 XP (a rule configured to 0) are left out.
    """
    if not judgment.success:
        return ()
    lines = [_line("task_completed", table.task_completed)]
    if judgment.retries == 0:
        lines.append(_line("first_try", table.first_try))
    if judgment.score is not None:
        reached = [tier for tier in table.quality_tiers if tier.reached_by(judgment.score)]
        if reached:
            lines.append(_line(reached[-1].event, reached[-1].xp))
    if judgment.under_budget:
        lines.append(_line("under_budget", table.under_budget))
    if judgment.fast:
        lines.append(_line("fast_completion", table.fast_completion))
    streak = streak_after(streak_before, success=True)
    bonus = table.streak_bonus(streak)
    if bonus:
        lines.append(_line(f"streak_{streak}", bonus))
    return tuple(line for line in lines if line.xp > 0)
