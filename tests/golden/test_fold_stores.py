"""The fold's stored results, byte for byte, on every store (``fold_stores.py``)."""

from __future__ import annotations

import json

from tests.golden.fold_stores import GOLDEN, snapshot_of


def test_the_fold_stores_exactly_what_the_golden_file_holds(store_url: str) -> None:
    """401 judgments (one by one, then imported) leave every event, profile JSON, ledger
    line and skill state exactly as the fold of pydantic copies left them."""
    golden = json.loads(GOLDEN.read_text())
    snapshot = snapshot_of(store_url)
    for agent_id, expected in golden["agents"].items():
        assert snapshot["agents"][agent_id] == expected, agent_id
    assert snapshot == golden
