"""The projection's upper-tail order of one task type: the candidates' keys sorted
(``-(skill + tail sd * sd)``, then the agent id) with their skills and sds in numpy arrays
of the same order, kept in step as agents move, so that explore draws for every agent at
once (``domain/routing/select.py``, ``_draws``) without building a candidate per agent."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from agentladder.domain.routing.table import Candidate, Tails
from agentladder.services.routing.orders import Key

__all__ = ["TailOrder"]


class TailOrder:
    """Keys in order, with the skill and sd of each at the same index."""

    __slots__ = ("keys", "sds", "skills")

    def __init__(self, pairs: Iterable[tuple[Key, Candidate]] = ()) -> None:
        ordered = sorted(pairs, key=lambda pair: pair[0])
        self.keys: list[Key] = [key for key, _ in ordered]
        self.skills = np.fromiter((c.skill for _, c in ordered), np.float64, len(ordered))
        self.sds = np.fromiter((c.sd for _, c in ordered), np.float64, len(ordered))

    def __len__(self) -> int:
        return len(self.keys)

    def index(self, key: Key) -> int | None:
        """Where ``key`` is, or None."""
        at = bisect.bisect_left(self.keys, key)
        return at if at < len(self.keys) and self.keys[at] == key else None

    def add(self, key: Key, c: Candidate) -> None:
        """Put ``c`` in its place (new arrays: a table handed out keeps the old ones)."""
        at = bisect.bisect_left(self.keys, key)
        self.keys.insert(at, key)
        self.skills = np.insert(self.skills, at, c.skill)
        self.sds = np.insert(self.sds, at, c.sd)

    def remove(self, key: Key) -> None:
        """Take ``key`` out, if it is in."""
        at = self.index(key)
        if at is not None:
            del self.keys[at]
            self.skills = np.delete(self.skills, at)
            self.sds = np.delete(self.sds, at)

    def tails(
        self, item: Callable[[Key], Candidate], out: Iterable[Key], extra: Sequence[Candidate]
    ) -> Tails:
        """The ``Tails`` a routing draws from: these agents (``item`` builds the candidate
        of a key) but those whose keys are in ``out``, then ``extra`` (the degraded
        agents at their scaled skill and sd, by agent id: ``routing_table``'s order)."""
        keys, skills, sds = self.keys, self.skills, self.sds
        gone = sorted(at for at in map(self.index, out) if at is not None)
        kept: npt.NDArray[np.intp] | None = None
        if gone:
            kept = np.delete(np.arange(len(keys)), gone)
            skills, sds = skills[kept], sds[kept]
        if extra:
            skills = np.concatenate((skills, [c.skill for c in extra]))
            sds = np.concatenate((sds, [c.sd for c in extra]))
        size = len(keys) - len(gone)

        def at(index: int) -> Candidate:
            if index >= size:
                return extra[index - size]
            return item(keys[index if kept is None else int(kept[index])])

        return Tails(skills=skills, sds=sds, at=at)
