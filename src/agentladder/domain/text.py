"""Identifiers a person reads: names, tags, task types and ids hold no invisible character.

``audit`` followed by a zero-width space displays as ``audit`` and is another tag, so
every identifier refuses (``invisible``):

- Unicode categories ``Cc`` (control: tab, newline, NUL, the C1 controls), ``Cf``
  (format: zero-width space and joiners, bidirectional overrides, the byte-order mark,
  the soft hyphen, tag characters), ``Zl`` and ``Zp`` (line and paragraph separators) and
  ``Cs`` (lone surrogates);
- whitespace that looks like a plain space: every ``Zs`` but U+0020 itself (no-break
  space, the en and em spaces, the ideographic space...);
- characters that draw nothing although their category says otherwise (``BLANKS``:
  the Hangul fillers, the braille blank, the combining grapheme joiner, the variation
  selectors).

Free text (a description, a question, notes, an output) is not an identifier and is left
as written. ``Visible`` is the annotation the models put on their identifier fields; data
read back from a store is validated with ``STORED`` as its context, and then not checked
again, so a value stored before the rule existed still reads.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator, ValidationInfo

from agentladder.errors import InvalidInput

__all__ = [
    "BLANKS",
    "STORED",
    "Visible",
    "VisibleStr",
    "check_visible",
    "invisible",
    "reason_invisible",
]

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
BLANKS = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0}
    | set(range(0xFE00, 0xFE10))
    | set(range(0xE0100, 0xE01F0))
)
"""Code points that draw nothing whatever their category (Hangul fillers, braille blank,
combining grapheme joiner, Khmer inherent vowels, variation selectors)."""

STORED: Mapping[str, bool] = {"stored": True}
"""The validation context of data read back from a store: identifiers are not checked
again (``model_validate(data, context=STORED)``)."""


def invisible(value: str) -> tuple[int, str] | None:
    """The first invisible or confusable character of ``value`` (its position and the
    character), or None when every character is visible."""
    for position, char in enumerate(value):
        point = ord(char)
        category = unicodedata.category(char)
        if (
            category in _REFUSED_CATEGORIES
            or (category == "Zs" and point != 0x20)
            or point in BLANKS
        ):
            return position, char
    return None


def _described(char: str) -> str:
    name = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}"
    return f"{code} {name}" if name else code


def reason_invisible(value: str) -> str | None:
    """Why ``value`` is refused as an identifier (one line), or None."""
    found = invisible(value)
    if found is None:
        return None
    position, char = found
    return f"holds an invisible or confusable character, {_described(char)}, at position {position}"


def check_visible(value: str, field: str) -> str:
    """``value`` if every character of it is visible, else ``InvalidInput`` naming
    ``field``, the character and where it is."""
    reason = reason_invisible(value)
    if reason is not None:
        raise InvalidInput(field, value, reason)
    return value


def _stored(info: ValidationInfo) -> bool:
    context = info.context
    return isinstance(context, Mapping) and bool(context.get("stored"))


def _visible(value: str, info: ValidationInfo) -> str:
    if _stored(info):
        return value
    reason = reason_invisible(value)
    if reason is not None:
        raise ValueError(reason)
    return value


Visible = AfterValidator(_visible)
"""The annotation of an identifier field: ``Annotated[str, Visible]``."""

VisibleStr = Annotated[str, Visible]
"""A string identifier without invisible characters."""
