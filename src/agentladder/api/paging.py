"""One pagination shape for every list endpoint (``docs/api.md``, "Pagination").

A list answers its items under its own key (``deliberations``, ``entries``, ``agents``,
as before) and, beside them, ``page``: ``{"offset", "limit", "next"}``. ``next`` is the
path and query of the next page (every other parameter kept, ``offset`` moved on), or
null on the last page; the same link is in the ``Link`` header (``rel="next"``). Whether
a next page exists is known by asking the store for one item more than the page holds,
so no list needs a count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar
from urllib.parse import urlencode

from fastapi import Request, Response
from pydantic import BaseModel, Field

__all__ = ["PageOut", "page_of"]

T = TypeVar("T")


class PageOut(BaseModel):
    """Where a page of a list is, and how to ask for the next one."""

    offset: int = Field(description="items skipped before this page")
    limit: int | None = Field(description="the most items a page holds (null: all)")
    next: str | None = Field(description="path and query of the next page; null on the last page")


def page_of(
    request: Request, response: Response, items: Sequence[T], *, offset: int, limit: int | None
) -> tuple[list[T], PageOut]:
    """The page from ``items``, read with ``limit + 1`` from ``offset`` (all when ``limit``
    is None), and its ``page``; sets the ``Link`` header when there is a next page."""
    if limit is None or len(items) <= limit:
        return list(items), PageOut(offset=offset, limit=limit, next=None)
    query = dict(request.query_params)
    query.update(offset=str(offset + limit), limit=str(limit))
    link = f"{request.url.path}?{urlencode(query)}"
    response.headers["Link"] = f'<{link}>; rel="next"'
    return list(items[:limit]), PageOut(offset=offset, limit=limit, next=link)
