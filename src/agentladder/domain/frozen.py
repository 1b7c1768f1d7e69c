"""Frozen pydantic models built on the hot path without validation or copying.

``replaced(model, **changes)`` is ``model.model_copy(update=changes)`` without its copy
of every attribute (``copy.copy`` of the field dict, the set of given fields, the extra
and private parts): a new instance sharing the unchanged values, which a frozen model
never mutates. ``built(cls, **values)`` is ``cls.model_construct(**values)`` for a call
that gives every field. Both are for values already known to be valid (folded from
validated ones by the rules); pydantic validates at the edges only.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["built", "replaced"]

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__


def replaced(model: M, **changes: Any) -> M:
    """``model`` with ``changes``: what ``model_copy(update=changes)`` gives, the
    unchanged values shared."""
    cls = type(model)
    new = cls.__new__(cls)
    values = model.__dict__.copy()
    values.update(changes)
    _set(new, "__dict__", values)
    given = model.__pydantic_fields_set__
    if not changes.keys() <= given:  # else shared: a frozen model never changes its set
        given = given | changes.keys()
    _set(new, "__pydantic_fields_set__", given)
    _set(new, "__pydantic_extra__", model.__pydantic_extra__)
    _set(new, "__pydantic_private__", model.__pydantic_private__)
    return new


def built(cls: type[M], **values: Any) -> M:
    """``cls`` of ``values``, every field given, of its type: ``model_construct`` without
    its pass over the defaults."""
    new = cls.__new__(cls)
    _set(new, "__dict__", values)
    _set(new, "__pydantic_fields_set__", set(values))
    _set(new, "__pydantic_extra__", None)
    _set(new, "__pydantic_private__", None)
    return new
