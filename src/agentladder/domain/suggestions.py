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

import bisect
import difflib
from collections.abc import Iterable, Sequence

__all__ = [
    "BESIDE",
    "CUTOFF",
    "FULL_SCAN",
    "MAX_SUGGESTIONS",
    "MAX_TYPED",
    "Names",
    "closest",
    "did_you_mean",
    "hint",
]

MAX_SUGGESTIONS = 3
CUTOFF = 0.75
"""How alike (difflib's ratio) a known name must be to be suggested: one or two letters off."""
MAX_TYPED = 256
"""A longer name is offered nothing (no known name is that long: ids and task types are
at most 64 characters), so that a hostile value costs nothing to compare."""
FULL_SCAN = 2000
"""Up to this many known names, each is compared; beyond, those ``_beside`` the name."""
BESIDE = 64


class Names:
    """Known names, indexed once for ``closest``: by their case-folded form, and sorted
    forwards and reversed when there are more than ``FULL_SCAN`` (a cached index answers
    in microseconds at 100,000 names; difflib over all of them takes over a second)."""

    def __init__(self, known: Iterable[str]) -> None:
        self.by_folded: dict[str, set[str]] = {}
        for name in known:
            self.by_folded.setdefault(name.casefold(), set()).add(name)
        self.forward: list[str] = []
        self.backward: list[str] = []
        if len(self.by_folded) > FULL_SCAN:
            self.forward = sorted(self.by_folded)
            self.backward = sorted(name[::-1] for name in self.by_folded)

    def __len__(self) -> int:
        return len(self.by_folded)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.by_folded.get(name.casefold(), ())

    def closest(self, typed: str) -> list[str]:
        """The names closest to ``typed``, closest first (at most three, each once; none
        equal to ``typed``, which is no suggestion). A name longer than ``MAX_TYPED``
        gets none; among more than ``FULL_SCAN`` names only the ``BESIDE`` on each side
        of ``typed`` in sorted order, and in the order of reversed names, are compared:
        a typo keeps the start or the end of what was meant."""
        if len(typed) > MAX_TYPED:
            return []
        folded = typed.casefold()
        candidates = list(self.by_folded) if not self.forward else self._beside(folded)
        near = difflib.get_close_matches(folded, candidates, n=MAX_SUGGESTIONS + 1, cutoff=CUTOFF)
        found = [name for each in near for name in sorted(self.by_folded[each]) if name != typed]
        return found[:MAX_SUGGESTIONS]

    def _beside(self, folded: str) -> list[str]:
        found: set[str] = set()
        at = bisect.bisect_left(self.forward, folded)
        found.update(self.forward[max(0, at - BESIDE) : at + BESIDE])
        back = folded[::-1]
        at = bisect.bisect_left(self.backward, back)
        found.update(name[::-1] for name in self.backward[max(0, at - BESIDE) : at + BESIDE])
        return sorted(found)


def closest(typed: str, known: Iterable[str]) -> list[str]:
    """``Names(known).closest(typed)``: for names read once (an index kept, ``Names``)."""
    return Names(known).closest(typed)


def did_you_mean(suggestions: Sequence[str]) -> str:
    """``did you mean echo?`` (``... echo or echo2?``), or ``""`` with no suggestion."""
    return f"did you mean {' or '.join(suggestions)}?" if suggestions else ""


def hint(typed: str, known: Iterable[str]) -> str:
    """``did_you_mean`` of the names ``closest`` to ``typed``."""
    return did_you_mean(closest(typed, known))
