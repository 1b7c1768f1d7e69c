"""The scales a score may come on, and their map to the 0-10 scale every score is kept on.

A source's scale is decided once for all its values: given (``scale`` on a judgment,
``--scale`` on an import) or, for an Inspect scorer, read from all its values at once
(``detect``). Each scale maps linearly, its lowest value to 0 and its highest to 10: on
1-10, 1 is the worst (0) and 10 the best (10).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["SCALES", "Scale", "detect", "to_ten"]

Scale = Literal["0-1", "1-10", "0-10", "0-100"]
SCALES: dict[str, tuple[float, float]] = {"0-1": (0.0, 1.0), "1-10": (1.0, 10.0),
                                          "0-10": (0.0, 10.0), "0-100": (0.0, 100.0)}  # fmt: skip
assert set(SCALES) == set(get_args(Scale))


def to_ten(value: float, scale: str) -> float:
    """``value`` on ``scale`` mapped to 0-10; ``ValueError`` when it lies outside it."""
    low, high = SCALES[scale]
    if not low <= value <= high:
        raise ValueError(f"is outside the scale {scale}")
    return 10.0 * (value - low) / (high - low)


def detect(low: float, high: float) -> Scale:
    """The scale of a scorer whose values span ``low`` to ``high``: 0-1 when none is above
    1, 0-100 when one is above 10, else 1-10 when none is below 1, else 0-10. A 0-10
    scorer that never gave less than 1 reads as 1-10: say ``--scale`` to be sure."""
    if high <= 1.0:
        return "0-1"
    if high > 10.0:
        return "0-100"
    return "1-10" if low >= 1.0 else "0-10"
