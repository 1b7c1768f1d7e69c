"""Did you mean? The known names closest to a name typed, and the one phrase that offers
them.

A name nobody knows (an agent id, a task type, a gateway ``model``) is most often a typo:
``ehco`` for ``echo``, ``code_reveiw`` for ``code_review``. ``closest`` finds the known
names one or two letters off (difflib's ratio at least ``CUTOFF``, compared without case:
``Echo`` finds ``echo``), closest first, at most ``MAX_SUGGESTIONS``; ``did_you_mean``
says them: ``did you mean echo?``, ``did you mean echo or echo2?``, or nothing.

Every message offering a suggestion (the Oracle's unknown agent, a deliberation's unknown
named agent, a profile or agent not found, routing at a task type without evidence, the
gateway's unknown model) says it with ``did_you_mean``, so they read alike.

Pure: no I/O.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

__all__ = ["CUTOFF", "MAX_SUGGESTIONS", "closest", "did_you_mean", "hint"]

MAX_SUGGESTIONS = 3
CUTOFF = 0.75
"""How alike (difflib's ratio) a known name must be to be suggested: one or two letters off."""


def closest(typed: str, known: Iterable[str]) -> list[str]:
    """The names of ``known`` closest to ``typed``, closest first (at most three, each
    once; none equal to ``typed``, which is no suggestion)."""
    by_folded: dict[str, set[str]] = {}
    for name in known:
        if name != typed:
            by_folded.setdefault(name.casefold(), set()).add(name)
    near = difflib.get_close_matches(
        typed.casefold(), list(by_folded), n=MAX_SUGGESTIONS, cutoff=CUTOFF
    )
    found = [name for folded in near for name in sorted(by_folded[folded])]
    return found[:MAX_SUGGESTIONS]


def did_you_mean(suggestions: Sequence[str]) -> str:
    """``did you mean echo?`` (``... echo or echo2?``), or ``""`` with no suggestion."""
    return f"did you mean {' or '.join(suggestions)}?" if suggestions else ""


def hint(typed: str, known: Iterable[str]) -> str:
    """``did_you_mean`` of the names ``closest`` to ``typed``."""
    return did_you_mean(closest(typed, known))
