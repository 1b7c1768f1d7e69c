"""Decoding stored JSON into models; a bad value is a ``CorruptRecord`` naming its key.

Stored values are validated with ``STORED`` as the context: an identifier stored before
the rule on invisible characters (``domain/text.py``) still reads."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from agentladder.domain.text import STORED
from agentladder.errors import CorruptRecord

__all__ = ["decode", "decode_as", "loads"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def decode(model: type[M], data: str | bytes, key: str) -> M:
    """``model`` from its JSON ``data``; ``CorruptRecord(key, ...)`` when it cannot be read."""
    try:
        return model.model_validate_json(data, context=STORED)
    except ValidationError as error:
        raise CorruptRecord(key, f"{model.__name__} {_first(error)}") from None


def decode_as(adapter: TypeAdapter[T], data: str | bytes, key: str) -> T:
    """``decode`` for a type read through a pydantic ``TypeAdapter`` (a dataclass)."""
    try:
        return adapter.validate_json(data, context=STORED)
    except ValidationError as error:
        raise CorruptRecord(key, _first(error)) from None


def _first(error: ValidationError) -> str:
    """``<where>: <problem>`` of a validation error's first complaint."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "value"
    return f"{where}: {first['msg']}"


def loads(data: str | bytes, key: str) -> Any:
    """Parsed JSON ``data``; ``CorruptRecord(key, ...)`` when it is not JSON."""
    try:
        return json.loads(data)
    except (ValueError, TypeError) as error:
        raise CorruptRecord(key, f"not JSON: {error}") from None
