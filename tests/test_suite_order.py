"""The suite's long files, collected first (``tests/conftest.py``), still exist: a file
renamed or removed would quietly fall back to its place in the collection."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONG_FIRST

ROOT = Path(__file__).resolve().parent.parent


def test_every_long_file_named_first_exists() -> None:
    missing = [path for path in LONG_FIRST if not (ROOT / path).is_file()]
    assert missing == []
    assert len(set(LONG_FIRST)) == len(LONG_FIRST)
