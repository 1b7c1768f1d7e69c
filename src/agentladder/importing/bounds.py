"""The bounds an import reads within, whatever its files hold (docs/import.md, "Bounds").

The memory of an import is bounded by these, not by its files: a JSONL line is read whole
only up to ``max_line`` bytes; an Inspect log is never held whole, but streamed, member by
member, through a JSON parser that keeps only the few fields a judgment needs; what the
parser buffers is one string (or number) at a time, at most ``max_string`` bytes. A
``.eval`` member is decompressed only within ``max_member`` bytes and a ratio of
``max_ratio`` (checked on the sizes its header declares before reading it, and on the
bytes it really yields while streaming: a header that lies is caught), and a log has at
most ``max_members`` members.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentladder.errors import InvalidInput

__all__ = ["MAX_DEPTH", "RATIO_GRACE", "ImportBounds", "parse_size", "shown_size"]

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
RATIO_GRACE = 1 * MIB
"""The ratio is not checked on a member's first mebibyte: small members of repeated text
compress far better than logs do and cannot hurt (Apache POI's ``ZipSecureFile`` allows
100 KiB the same way)."""
MAX_DEPTH = 1000
"""The deepest nesting of arrays and objects read (a log nests a few dozen deep)."""
_SIZE = re.compile(r"(\d+)\s*(|b|kib|mib|gib)", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "kib": KIB, "mib": MIB, "gib": GIB}


@dataclass(frozen=True, slots=True)
class ImportBounds:
    """What one import may read: see the module docstring. The defaults are
    docs/import.md's."""

    max_line: int = 1 * MIB
    """Bytes of one JSONL line (without its newline): the API's default body limit, so a
    judgment the API takes is a line the import takes."""
    max_member: int = 512 * MIB
    """Bytes one ``.eval`` member (a sample, the header) decompresses to."""
    max_ratio: int = 200
    """Decompressed bytes per compressed byte of one member (past ``RATIO_GRACE``)."""
    max_members: int = 100_000
    """Members of one ``.eval`` log (samples x epochs, and a few more)."""
    max_string: int = 32 * MIB
    """Bytes of the longest string or number in a log (the JSON parser holds one whole)."""


def parse_size(option: str, text: str) -> int:
    """``4096``, ``64KiB``, ``512MiB``, ``2GiB`` as bytes; ``InvalidInput(option)`` for
    anything else."""
    found = _SIZE.fullmatch(text.strip())
    if found is None or int(found.group(1)) < 1:
        raise InvalidInput(
            option, text, "must be a size: bytes, or a number with KiB, MiB or GiB (512MiB)"
        )
    return int(found.group(1)) * _UNITS[found.group(2).lower()]


def shown_size(size: int) -> str:
    """``512 MiB`` for a round size, else the bytes (``1,000 bytes``)."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit:,} {name}"
    return f"{size:,} bytes"
