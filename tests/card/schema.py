"""The A2A v1.0 AgentCard schema shipped beside the card tests (README.md there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

__all__ = ["card_problems"]

_SCHEMA = json.loads((Path(__file__).parent / "a2a_agent_card.schema.json").read_text())
_VALIDATOR = Draft202012Validator(_SCHEMA)


def card_problems(card: Any) -> list[str]:
    """Every way ``card`` departs from the AgentCard schema (none: it validates)."""
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(card)'}: {error.message}"
        for error in _VALIDATOR.iter_errors(card)
    ]
