"""Identifiers that look like others are refused (``domain/text.py``): values not in NFKC
form, generic combining marks, and scripts mixed beyond Unicode's highly restrictive
profile; whole non-Latin ids and Latin with CJK are kept."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from agentladder.domain.judgment import Judgment
from agentladder.domain.text import (
    STORED,
    VisibleStr,
    check_visible,
    confusable,
    reason_invisible,
    script_of,
)
from agentladder.errors import InvalidInput

SETTINGS = settings(derandomize=True, max_examples=100, deadline=None)
LATIN = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-_.:"), min_size=1)
CYRILLIC = "абвгдежзийклмнопрстуфхцчшщыэюя"
GREEK = "αβγδεζηθικλμνξοπρστυφχψω"


def test_a_cyrillic_letter_among_latin_ones_is_named() -> None:
    """``atlas`` with U+0430 for its ``a``: refused at position 0, the character named."""
    reason = reason_invisible("\u0430tlas")
    assert reason == (
        "holds U+0430 CYRILLIC SMALL LETTER A at position 0, which mixes scripts"
        " (Cyrillic among Latin)"
    )


@pytest.mark.parametrize(
    ("value", "position", "code_point"),
    [
        ("atl\u0430s", 3, "U+0430 CYRILLIC SMALL LETTER A"),
        ("gpt-4\u03bf", 5, "U+03BF GREEK SMALL LETTER OMICRON"),
        ("\uff41tlas", 0, "U+FF41 FULLWIDTH LATIN SMALL LETTER A"),
        ("audit-\U0001d41a", 6, "U+1D41A MATHEMATICAL BOLD SMALL A"),
        ("cafe\u0301", 4, "U+0301 COMBINING ACUTE ACCENT"),
        ("o\u0338k", 1, "U+0338 COMBINING LONG SOLIDUS OVERLAY"),
        ("\ufb01le", 0, "U+FB01 LATIN SMALL LIGATURE FI"),
        ("sk\u0578p", 2, "U+0578 ARMENIAN SMALL LETTER VO"),
        ("ｱ-1", 0, "U+FF71 HALFWIDTH KATAKANA LETTER A"),
        ("\u0441\u043e\u043d\u0442\u0440\u0430\u0441t", 7, "U+0074 LATIN SMALL LETTER T"),
    ],
)
def test_confusable_characters_are_found_where_they_sit(
    value: str, position: int, code_point: str
) -> None:
    """Homoglyphs of other scripts, fullwidth, mathematical and ligature forms, combining
    marks: the first offending character is named at its position (the minority script's)."""
    found = confusable(value)
    assert found is not None
    assert found[0] == position
    reason = reason_invisible(value)
    assert reason is not None
    assert f"holds {code_point} at position {position}" in reason
    assert "\n" not in reason


@pytest.mark.parametrize(
    "value",
    [
        "atlas",
        "caf\u00e9",
        "\u043a\u043e\u043d\u0442\u0440\u0430\u043a\u0442-7",  # all Cyrillic
        "\u03c3\u03c5\u03bc\u03b2\u03cc\u03bb\u03b1\u03b9\u03bf",  # all Greek
        "\u5408\u540c-2026",  # Han
        "gpt-4o-\u65e5\u672c\u8a9e",  # Latin with Han
        "\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8",  # Han with katakana
        "\ud55c\uad6d\uc5b4-abc",  # Hangul with Latin
        "\u0939\u093f\u0928\u094d\u0926\u0940",  # Devanagari with its own marks
        "\u0639\u0642\u062f\u0663",  # Arabic with Arabic-Indic digit
        "stra\u00dfe",
    ],
)
def test_whole_scripts_and_allowed_mixes_are_kept(value: str) -> None:
    """An id wholly in one script (Cyrillic, Greek, Han, Devanagari with its vowel signs,
    Arabic with its digits), or Latin with Han, kana or Hangul, is accepted."""
    assert confusable(value) is None
    assert reason_invisible(value) is None


@SETTINGS
@given(LATIN, st.sampled_from(CYRILLIC + GREEK), st.data())
def test_one_foreign_letter_in_a_latin_id_is_refused(
    latin: str, foreign: str, data: st.DataObject
) -> None:
    """Any Latin id with one Cyrillic or Greek letter put anywhere (the Latin letters the
    more) is refused at that letter's position."""
    latin = "ab" + latin  # at least two Latin letters: Latin is the main script
    at = data.draw(st.integers(min_value=0, max_value=len(latin)))
    value = latin[:at] + foreign + latin[at:]
    found = confusable(value)
    assert found is not None
    assert found[:2] == (at, foreign)


@SETTINGS
@given(st.text(st.sampled_from(CYRILLIC + "-_.0123456789"), min_size=1))
def test_any_id_in_cyrillic_alone_is_kept(value: str) -> None:
    """Cyrillic letters with ASCII digits and punctuation are never refused."""
    assert confusable(value) is None


@SETTINGS
@given(st.text(min_size=1, max_size=20))
def test_every_accepted_value_is_its_own_nfkc_form(value: str) -> None:
    """Whatever the text, an accepted value is NFKC-stable and holds no generic combining
    mark; ASCII is always accepted as far as confusables go."""
    if confusable(value) is None:
        assert unicodedata.normalize("NFKC", value) == value
        assert not any(unicodedata.name(c, "").startswith("COMBINING ") for c in value)
    if value.isascii():
        assert confusable(value) is None


@SETTINGS
@given(st.text(min_size=1, max_size=20))
def test_a_refusal_names_a_character_of_the_value(value: str) -> None:
    """A refused value's position points at the character it names."""
    found = confusable(value)
    if found is not None:
        position, char, why = found
        assert value[position] == char
        assert why
        assert "\n" not in why


def test_scripts_come_from_the_names() -> None:
    """Script of a letter by its Unicode name; Han for CJK; none for ASCII digits,
    punctuation and the kana prolonged sound mark."""
    assert script_of("a") == "LATIN"
    assert script_of("\u0430") == "CYRILLIC"
    assert script_of("\u4e00") == "HAN"
    assert script_of("\u0663") == "ARABIC"
    assert [script_of(c) for c in "7-_\u30fc"] == [None] * 4


def test_check_visible_names_the_field_and_the_value() -> None:
    """``check_visible`` raises one ``InvalidInput`` naming the field, value and character."""
    with pytest.raises(InvalidInput) as refused:
        check_visible("\u0430tlas", "event_id")
    assert refused.value.field == "event_id"
    assert refused.value.value == "\u0430tlas"
    assert "U+0430 CYRILLIC SMALL LETTER A" in str(refused.value)


class _Tagged(BaseModel):
    tag: VisibleStr


def test_models_refuse_new_values_and_read_stored_ones() -> None:
    """A judgment's contract id with a homoglyph is refused naming the field; the same
    value read back from a store (``STORED``) still validates."""
    with pytest.raises(ValidationError) as refused:
        Judgment(agent_id="alpha", contract_id="\u0430tlas-1", score=8.0)
    error = refused.value.errors()[0]
    assert error["loc"] == ("contract_id",)
    assert "U+0430" in error["msg"]
    assert _Tagged.model_validate({"tag": "\uff41udit"}, context=STORED).tag == "\uff41udit"
    with pytest.raises(ValidationError):
        _Tagged.model_validate({"tag": "\uff41udit"})
