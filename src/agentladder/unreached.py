"""What a connection that could not be made says, in one line, for the client, the CLI and
the agent process (``agentladder agent --server``): ``could not connect to
http://127.0.0.1:8000 (connection refused): is `agentladder serve` running there?``,
rather than httpx's "All connection attempts failed"."""

from __future__ import annotations

import httpx

__all__ = ["not_connected"]


def not_connected(error: httpx.ConnectError) -> str | None:
    """``could not connect to http://127.0.0.1:8000 (connection refused): ...``; None when
    the request is not known."""
    try:
        url = error.request.url
    except RuntimeError:
        return None
    where = f"{url.scheme}://{url.netloc.decode('ascii', errors='replace')}"
    causes: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and len(causes) < 16:
        causes.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        refused = "connection refused"
        return f"could not connect to {where} ({refused}): is `agentladder serve` running there?"
    errors = [c for c in causes if isinstance(c, OSError) and c.strerror]
    why = str(errors[-1].strerror) if errors else str(causes[-1]) or type(error).__name__
    return f"could not connect to {where} ({why})"
