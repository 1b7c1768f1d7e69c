"""What a provider's answer must be for the gateway to pass it on as an answer, and what it
is when it is not.

- A status of 400, 413 or 422 refuses the request as invalid (too long a context, an
  unknown parameter): the request's fault as that provider sees it, so ``Rejected``, which
  is not held against the agent's health (docs/gateway.md, "Refused requests"). Any other
  status from 300 up is the agent's failure.
- A non-streamed answer must be a chat completion: a JSON object with at least one
  choice. An error object sent with status 200, or a body that is not JSON, is a failure.
- A streamed answer must be an event stream. Its start is checked before anything goes to
  the caller: lines that are not server-sent events, or a first event that is an error
  (``data: {"error": ...}``), are the agent's failure, and the next agent may be tried
  (``start_line``, read line by line by ``events.py``).
- A provider that answers a stream request with one whole chat completion (a server that
  does not stream) is passed on as the stream the caller asked for: one chunk holding
  every choice, the usage chunk when the caller asked for it, then ``data: [DONE]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentladder.errors import ProviderError, Rejected

__all__ = [
    "REJECTING", "answer_content", "as_events", "completion", "error_message", "failed",
    "start_line",
]  # fmt: skip

REJECTING = frozenset({400, 413, 422})
"""The statuses that refuse a request as invalid."""
_EXCERPT = 200
_FIELDS = frozenset({b"data", b"event", b"id", b"retry", b""})
"""The fields of a server-sent event's lines (an empty name: a comment, ``: ping``)."""


def _excerpt(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", errors="replace").split())
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "..."


def _detail(body: bytes) -> dict[str, object]:
    """The OpenAI-style error object of a body (``{"error": {...}}``), else empty."""
    try:
        decoded: Any = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    inner = decoded.get("error") if isinstance(decoded, Mapping) else None
    if not isinstance(inner, Mapping):
        return {}
    return {k: inner[k] for k in ("message", "type", "param", "code") if k in inner}


def failed(status: int, body: bytes, retry_after: float | None) -> ProviderError:
    """The error of an answer with status ``status`` (300 or more)."""
    message = f"answered {status}: {_excerpt(body)}"
    if status in REJECTING:
        return Rejected(status, message, _detail(body))
    return ProviderError("http", message, retry_after_s=retry_after)


def error_message(event: Mapping[str, Any]) -> str | None:
    """The message of an error event or body (``{"error": ...}``), else None (also for
    an empty ``error``, ``null`` or ``{}``, which some servers send beside an answer)."""
    inner = event.get("error")
    if not inner:
        return None
    message = inner.get("message") if isinstance(inner, Mapping) else inner
    return _excerpt(str(message).encode())


def completion(body: bytes) -> Mapping[str, Any]:
    """The chat completion a 2xx ``body`` holds; ``ProviderError`` (unparseable) when it
    is not JSON, is an error object, or has no choice."""
    try:
        decoded: Any = json.loads(body)
    except (ValueError, RecursionError):
        raise ProviderError("unparseable", f"not JSON: {_excerpt(body)!r}") from None
    if not isinstance(decoded, Mapping):
        raise ProviderError("unparseable", f"not a chat completion: {_excerpt(body)!r}")
    error = error_message(decoded)
    if error is not None:
        raise ProviderError("unparseable", f"an error object, not a chat completion: {error}")
    choices = decoded.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ProviderError("unparseable", "not a chat completion: no choices")
    return decoded


def answer_content(body: bytes, who: str) -> str:
    """``choices[0].message.content`` of a chat-completions body that an agent the gateway
    asked itself (``who``: "the judge", "the classifier") answered; ``ProviderError``
    (unparseable) when the body is not JSON or has no such text."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        raise ProviderError("unparseable", f"{who}'s answer is not JSON") from None
    choices = decoded.get("choices") if isinstance(decoded, Mapping) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, Mapping) else None
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, str):
        raise ProviderError("unparseable", "not a chat completion: no choices[0].message.content")
    return content


def start_line(line: bytes, head: bytes) -> bool:
    """Whether ``line``, a line of an event stream read before its first event, is that
    event's: True for a ``data:`` line (its event checked), False for a line before it (a
    blank line, a comment such as ``: ping``, another field); ``ProviderError`` when it is
    no server-sent event's line (``head``, the stream's first bytes, quoted) or the first
    event is an error."""
    stripped = line.strip()
    if not stripped:
        return False
    name, _, value = stripped.partition(b":")
    if name not in _FIELDS:
        raise ProviderError("unparseable", f"not an event stream: {_excerpt(head)!r}")
    if name != b"data":
        return False
    try:
        event: Any = json.loads(value)
    except (ValueError, RecursionError):
        return True  # ``[DONE]``, or a payload for the caller to read
    error = error_message(event) if isinstance(event, Mapping) else None
    if error is not None:
        raise ProviderError("invalid", f"the stream's first event is an error: {error}")
    return True


def as_events(answer: Mapping[str, Any], include_usage: bool) -> bytes:
    """A whole chat completion as the event stream a caller asked for: one chunk with every
    choice (its message as the delta), the usage chunk when ``include_usage``, ``[DONE]``."""
    head = {
        "id": answer.get("id", ""),
        "object": "chat.completion.chunk",
        "created": answer.get("created", 0),
        "model": answer.get("model", ""),
    }
    choices = []
    for position, choice in enumerate(answer["choices"]):
        given = choice if isinstance(choice, Mapping) else {}
        message = given.get("message")
        delta = dict(message) if isinstance(message, Mapping) else {}
        calls = delta.get("tool_calls")
        if isinstance(calls, list):  # a stream's tool calls carry their index
            delta["tool_calls"] = [
                {"index": i, **call} if isinstance(call, Mapping) else call
                for i, call in enumerate(calls)
            ]
        choices.append({
            "index": given.get("index", position),
            "delta": delta,
            "finish_reason": given.get("finish_reason"),
            "logprobs": given.get("logprobs"),
        })  # fmt: skip
    events = [{**head, "choices": choices}]
    if include_usage and isinstance(answer.get("usage"), Mapping):
        events.append({**head, "choices": [], "usage": answer["usage"]})
    lines = [b"data: " + json.dumps(event).encode() + b"\n\n" for event in events]
    return b"".join(lines) + b"data: [DONE]\n\n"
