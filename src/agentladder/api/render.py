"""How the dashboard's pages are rendered: Jinja2 templates (``api/templates``, autoescaped,
shipped in the wheel), off the event loop (``services/offload.py``), and the task types a
page shows a page at a time.

An agent may be judged in up to ``oracle.max_task_types_per_agent`` task types and a store
hold ``max_task_types``; a page shows ``TYPES_PER_PAGE`` of them (those with the most
evidence first) and links the next and previous ones (``?types=OFFSET``), so a page's size
does not grow with the task types behind it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel

from agentladder.api.deps import MAX_OFFSET
from agentladder.services.offload import off_loop

__all__ = [
    "POLL_MS",
    "TYPES_PER_PAGE",
    "TypesOffset",
    "TypesShown",
    "duration",
    "environment",
    "money",
    "page",
    "stamp",
    "types_shown",
    "when",
]

POLL_MS = 2000
"""How often an open page polls itself for its live parts, in milliseconds."""
TYPES_PER_PAGE = 12
"""Task types a dashboard page shows at once (each with its boards or rows)."""
TypesOffset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="the first task type shown")]
"""``?types=OFFSET``: where a page's task types start."""


def when(at: float | None) -> str:
    """Unix seconds as the dashboard writes every time: ``2026-01-05 10:00:00 UTC``."""
    return "—" if at is None else f"{datetime.fromtimestamp(at, UTC):%Y-%m-%d %H:%M:%S} UTC"


def stamp(text: str | None) -> str:
    """An ISO 8601 timestamp (UTC when naive, as the ledger keeps them) written as ``when``;
    the text itself if it is not one."""
    if not text:
        return "—"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    return when((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def seconds_text(seconds: float) -> str:
    """``3.2 s``, ``4 min 05 s``, ``2 h 03 min``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def duration(started: float | None, finished: float | None, now: float) -> str:
    """How long a deliberation ran (finished - started), or ``running for ...`` while it
    runs; a dash before it started."""
    if started is None:
        return "—"
    if finished is None:
        return f"running for {seconds_text(now - started)}"
    return seconds_text(finished - started)


def money(value: float | None) -> str:
    """Dollars: four decimals, more below a cent so that two significant digits show
    (``$0.00042``, not ``$0.0004``)."""
    if value is None:
        return "—"
    digits = 4
    if 0 < abs(value) < 0.01:
        digits = max(4, 1 - math.floor(math.log10(abs(value))))
    return f"${value:.{digits}f}"


def environment() -> Environment:
    """The templates' environment, with the filters they use (each shows a dash for None)."""
    env = Environment(loader=PackageLoader("agentladder.api", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.filters.update(
        when=when,
        stamp=stamp,
        money=money,
        duration=duration,
        number=lambda value, digits=1: "—" if value is None else f"{value:.{digits}f}",
        percent=lambda ratio: "—" if ratio is None else f"{100 * ratio:.1f}%",
    )
    return env


_ENV = environment()


async def page(request: Request, name: str, **context: Any) -> HTMLResponse:
    """The template ``name`` rendered with ``context`` on a CPU thread."""
    values = {"request": request, "poll_ms": POLL_MS, **context}
    html = await off_loop(_ENV.get_template(name).render, values)
    return HTMLResponse(html)


class TypesShown(BaseModel):
    """The task types a page shows, and where the others are."""

    types: list[str]
    offset: int
    total: int
    previous: int | None
    next: int | None

    @property
    def more(self) -> int:
        """Task types not on this page."""
        return self.total - len(self.types)


def types_shown(
    weights: Mapping[str, float], offset: int, size: int = TYPES_PER_PAGE
) -> TypesShown:
    """A page of the task types of ``weights`` (the evidence behind each), the most
    evidence first, ties by name."""
    ordered = sorted(weights, key=lambda t: (-weights[t], t))
    start = min(max(offset, 0), max(len(ordered) - 1, 0))
    shown = ordered[start : start + size]
    return TypesShown(
        types=shown,
        offset=start,
        total=len(ordered),
        previous=max(start - size, 0) if start > 0 else None,
        next=start + size if start + size < len(ordered) else None,
    )
