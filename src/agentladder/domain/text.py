"""Identifiers a person reads: names, tags, task types and ids hold no invisible
character and no look-alike of another identifier.

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

``atlas`` written with a Cyrillic first letter (U+0430) displays as ``atlas`` and is
another id, so an identifier also refuses (``confusable``, after the above):

- a value not in Unicode's NFKC form (``unicodedata``): fullwidth and halfwidth forms
  (U+FF41 for ``a``), mathematical and circled letters, ligatures, an accent written as a
  letter and a combining mark (``e`` + U+0301) where one character exists (``é``). NFKC
  is the form identifiers are compared in; a value not in it is refused rather than
  rewritten, since the caller would then hold an id the service does not;
- a generic combining mark (U+0300-U+036F and the other ``COMBINING`` marks) that no
  precomposed character absorbs: stacked on a letter it draws another (``o`` + U+0338
  looks like ``ø``);
- letters (and digits) of scripts that do not go together, as Unicode's
  "highly restrictive" profile (UTS #39) has it: one script, or Latin with Han and
  Japanese kana, with Han and Bopomofo, or with Han and Hangul. So Latin mixed with
  Cyrillic, Greek, Armenian or Cherokee letters is refused, while an id wholly in
  Cyrillic, Greek or CJK, or ``gpt-4o-日本語``, is accepted. A character's script is the
  first word of its Unicode name (``CYRILLIC SMALL LETTER A``), with ``CJK`` and
  ``IDEOGRAPHIC`` as Han; a value wholly in a script whose letters look Latin
  (``coco`` all in Cyrillic) is not caught: that needs UTS #39's confusables table.

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

from agentladder.errors import InvalidInput, shown_value

__all__ = [
    "BLANKS",
    "SCRIPT_SETS",
    "STORED",
    "Visible",
    "VisibleStr",
    "check_visible",
    "confusable",
    "invisible",
    "reason_invisible",
    "script_of",
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


SCRIPT_SETS: tuple[frozenset[str], ...] = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
"""The scripts that may share an identifier besides a single one (UTS #39, "highly
restrictive": Japanese, Chinese with Bopomofo, Korean, each with Latin)."""

_NO_SCRIPT = frozenset({"DIGIT", "MODIFIER", "KATAKANA-HIRAGANA"})
"""First words of names of letters and digits used with any script (the ASCII digits,
modifier letters, the kana prolonged sound mark)."""
_HAN = frozenset({"CJK", "IDEOGRAPHIC"})


def script_of(char: str) -> str | None:
    """The script of a letter, mark or digit: the first word of its Unicode name
    (``CYRILLIC`` for U+0430), ``HAN`` for CJK ideographs, ``ARABIC`` for Arabic-Indic
    digits; None for other characters (punctuation, symbols, ASCII digits) and for
    letters used with any script."""
    category = unicodedata.category(char)
    if category[0] not in "LM" and category != "Nd":
        return None
    name = unicodedata.name(char, "")
    if "ARABIC-INDIC" in name:
        return "ARABIC"
    first = name.partition(" ")[0]
    if not first or first in _NO_SCRIPT:
        return None
    return "HAN" if first in _HAN else first


def _fits(scripts: set[str]) -> bool:
    return len(scripts) <= 1 or any(scripts <= allowed for allowed in SCRIPT_SETS)


def _not_nfkc(value: str) -> int:
    """The position of the first character from which ``value`` is not in NFKC form (a
    mark that composes with the letter before it is that mark)."""
    for end in range(1, len(value) + 1):
        if not unicodedata.is_normalized("NFKC", value[:end]):
            return end - 1
    return len(value) - 1


def _mixed(value: str) -> tuple[int, str, str] | None:
    """The first character whose script does not go with the value's main one (the
    script most of its letters are in), with the main script."""
    scripts = [script_of(char) for char in value]
    counted = [s for s in scripts if s is not None]
    if _fits(set(counted)):
        return None
    main = max(dict.fromkeys(counted), key=counted.count)  # the first of the most used
    seen = {main}
    for position, script in enumerate(scripts):
        if script is None or script in seen:
            continue
        if not _fits(seen | {script}):
            return position, value[position], main
        seen.add(script)
    return None  # unreachable: the whole set does not fit, so some character does not


def confusable(value: str) -> tuple[int, str, str] | None:
    """The first character that makes ``value`` look like another identifier (the
    module says which), its position, and why (one line); None when there is none."""
    if value.isascii():
        return None  # ASCII is in NFKC form, has no combining mark and one script
    if not unicodedata.is_normalized("NFKC", value):
        position = _not_nfkc(value)
        char = value[position]
        shown = unicodedata.normalize("NFKC", value)
        return position, char, f"is not in Unicode's NFKC form (which writes {shown_value(shown)})"
    for position, char in enumerate(value):
        if unicodedata.name(char, "").startswith("COMBINING "):
            return position, char, "is a combining mark (it draws over another letter)"
    found = _mixed(value)
    if found is None:
        return None
    position, char, main = found
    script = script_of(char) or "?"
    why = f"mixes scripts ({script.title()} among {main.title()})"
    return position, char, why


def _described(char: str) -> str:
    name = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}"
    return f"{code} {name}" if name else code


def reason_invisible(value: str) -> str | None:
    """Why ``value`` is refused as an identifier (one line: the character, its position
    and why), or None: an invisible character first, else a confusable one."""
    found = invisible(value)
    if found is not None:
        position, char = found
        described = _described(char)
        return f"holds an invisible or confusable character, {described}, at position {position}"
    mixed = confusable(value)
    if mixed is None:
        return None
    position, char, why = mixed
    return f"holds {_described(char)} at position {position}, which {why}"


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
