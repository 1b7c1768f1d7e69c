"""Key files for the card tests (``keys.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.card.keys import KeyFiles, write_key


@pytest.fixture
def key_files(tmp_path: Path) -> KeyFiles:
    """A fresh P-256 key pair in ``tmp_path``."""
    return write_key(tmp_path)
