"""Work on the observations a block at a time: the temporaries of a step are made for
``BLOCK`` observations, not for all of them at once (a fit of 1,000,000 judgments made
a dozen arrays of 8 MB each for one EM step), and its sums come out the same bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK", "RunningSums", "slices"]

Floats = npt.NDArray[np.float64]
BLOCK = 1 << 16
"""Observations whose temporaries are made at once (8 bytes each: 512 KiB an array)."""


def slices(count: int, block: int | None = None) -> Iterator[slice]:
    """The blocks of ``count`` observations, in order (``BLOCK`` each unless told)."""
    size = BLOCK if block is None else block
    for start in range(0, count, size):
        yield slice(start, min(count, start + size))


class RunningSums:
    """Weights summed per index (0 to ``size``) block after block, equal bit for bit to one
    ``np.bincount`` over every block joined: that adds the weights one by one in their
    order onto 0.0; here each block's ``np.bincount`` first adds the sums so far, each onto
    0.0 (which leaves it as it is), then the block's weights in their order."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.total: Floats = np.zeros(size)
        self._every = np.arange(size, dtype=np.int64)

    def add(self, index: npt.NDArray[np.integer[Any]], weights: Floats) -> None:
        """Add one block's weights at their indices."""
        if len(index):
            every = np.concatenate((self._every, index))
            weights = np.concatenate((self.total, weights))
            self.total = np.asarray(np.bincount(every, weights, self.size), dtype=np.float64)
