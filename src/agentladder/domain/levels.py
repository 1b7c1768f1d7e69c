"""Levels: rookie, reliable, trusted, expert, reached by XP thresholds.

Overall levels use 0/100/500/2000 XP; a specialization (one task type) uses half of
those, 0/50/250/1000, which is what the level-up specification's example profile shows
(280 XP in a specialization is trusted, 170 is reliable).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = [
    "LEVELS",
    "Level",
    "LevelThresholds",
    "level_for_xp",
    "level_number",
]


class Level(StrEnum):
    """An agent's standing; ordered from rookie (1) to expert (4)."""

    ROOKIE = "rookie"
    RELIABLE = "reliable"
    TRUSTED = "trusted"
    EXPERT = "expert"


LEVELS: tuple[Level, ...] = (Level.ROOKIE, Level.RELIABLE, Level.TRUSTED, Level.EXPERT)


def level_number(level: Level) -> int:
    """The specification's level number: rookie 1, reliable 2, trusted 3, expert 4."""
    return LEVELS.index(level) + 1


class LevelThresholds(BaseModel):
    """XP needed for each level; rookie is always 0 and the thresholds strictly rise."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rookie: int = 0
    reliable: int = 100
    trusted: int = 500
    expert: int = 2000

    @model_validator(mode="after")
    def _ascending(self) -> LevelThresholds:
        values = [self.rookie, self.reliable, self.trusted, self.expert]
        if self.rookie != 0:
            raise ValueError(f"rookie threshold must be 0, not {self.rookie}")
        for lower, higher, name in zip(values, values[1:], LEVELS[1:], strict=False):
            if higher <= lower:
                raise ValueError(f"{name.value} threshold must be above {lower}, not {higher}")
        return self

    def xp_for(self, level: Level) -> int:
        """The XP at which ``level`` starts."""
        return int(getattr(self, level.value))


def level_for_xp(xp: int, thresholds: LevelThresholds) -> Level:
    """The highest level whose threshold ``xp`` reaches."""
    if xp >= thresholds.expert:
        return Level.EXPERT
    if xp >= thresholds.trusted:
        return Level.TRUSTED
    if xp >= thresholds.reliable:
        return Level.RELIABLE
    return Level.ROOKIE
