"""Rule outputs pinned by golden files, so an unintended change in any rule shows up."""

from __future__ import annotations

import json

from tests.golden.oracle_sequence import GOLDEN, awards


def test_oracle_awards_match_the_golden_file() -> None:
    """60 judgments covering every XP rule give exactly the pinned itemized awards."""
    assert awards() == json.loads(GOLDEN.read_text())
