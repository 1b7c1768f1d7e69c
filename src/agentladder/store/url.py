"""Open a store from its URL: ``memory://``, ``sqlite:///path.db``, ``nats://host:port,...``."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from agentladder.errors import InvalidInput
from agentladder.store.base import Store

__all__ = ["DEFAULT_URL", "open_store", "sqlite_path"]

DEFAULT_URL = "sqlite:///agentladder.db"


async def open_store(url: str = DEFAULT_URL) -> Store:
    """The store ``url`` names, opened and ready (schema migrated, buckets created)."""
    parts = urlsplit(url)
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    if parts.scheme == "memory":
        from agentladder.store.memory import MemoryStore  # noqa: PLC0415 (load on use)

        return MemoryStore()
    if parts.scheme == "sqlite":
        from agentladder.store.sqlite.store import SqliteStore  # noqa: PLC0415

        path = sqlite_path(url)
        pages = options.get("checkpoint_pages", "")  # empty: by the file's size
        if pages and (not pages.isdigit() or not 1 <= int(pages) <= 1_000_000):
            raise InvalidInput(
                "store",
                url,
                f"has checkpoint_pages={pages!r}: it must be an integer from 1 to 1000000",
            )
        inline = options.get("inline_reads", "on")
        if inline not in ("on", "off"):
            raise InvalidInput("store", url, f"has inline_reads={inline!r}: it must be on or off")
        try:
            return SqliteStore(
                path,
                synchronous=options.get("synchronous", "full"),
                checkpoint_pages=int(pages) if pages else None,
                inline_reads=inline == "on",
            )
        except ValueError as error:
            raise InvalidInput("store", url, str(error)) from error
    if parts.scheme in ("nats", "tls"):
        from agentladder.store.nats.store import open_nats_store  # noqa: PLC0415

        return await open_nats_store(url)
    raise InvalidInput("store", url, "must start with memory://, sqlite:/// or nats://")


def sqlite_path(url: str) -> str:
    """The file a ``sqlite:///`` URL names; ``InvalidInput("store")`` for a bad one."""
    parts = urlsplit(url)
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    if parts.scheme != "sqlite" or parts.netloc or not path:
        raise InvalidInput(
            "store", url, "must look like sqlite:///relative.db or sqlite:////abs.db"
        )
    unknown = set(parse_qs(parts.query)) - {"synchronous", "checkpoint_pages", "inline_reads"}
    if unknown:
        raise InvalidInput("store", url, f"has unknown options {sorted(unknown)}")
    return path
