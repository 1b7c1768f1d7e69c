"""A chat completion as a Responses API ``Response`` object (docs/gateway.md, "The
Responses API"): pure translation, no I/O.

The first choice's text is one ``message`` output item (one ``output_text`` part), each
of its tool calls a ``function_call`` item after it; ``usage`` is the completion's
(``input_tokens``, ``output_tokens``, ``total_tokens``). The object echoes what the
request set (``instructions``, ``tools``, ``tool_choice``, ``temperature``, ``top_p``,
``parallel_tool_calls``, ``max_output_tokens``, ``metadata``, ``text``); ``model`` is the
request's (which agent answered is the ``x-agentladder-agent`` header).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["call_item", "message_item", "new_id", "response_of", "shell", "usage_of"]

_ECHOED: dict[str, Any] = {
    "instructions": None, "tools": [], "tool_choice": "auto", "temperature": None,
    "top_p": None, "parallel_tool_calls": True, "max_output_tokens": None, "metadata": {},
    "text": {"format": {"type": "text"}}, "user": None,
}  # fmt: skip


def new_id(prefix: str) -> str:
    """A fresh id (``resp_``, ``msg_``, ``fc_`` and 32 hex digits)."""
    return f"{prefix}_{uuid.uuid4().hex}"


def shell(request: Mapping[str, Any], response_id: str, created_at: float) -> dict[str, Any]:
    """The Response object before its output: status ``in_progress``, nothing used yet."""
    echoed = {k: request.get(k) if request.get(k) is not None else v for k, v in _ECHOED.items()}
    return {
        "id": response_id, "object": "response", "created_at": created_at,
        "status": "in_progress", "error": None, "incomplete_details": None,
        "model": request.get("model"), "output": [], "usage": None, "store": False,
        "previous_response_id": None, "reasoning": None, "truncation": "disabled", **echoed,
    }  # fmt: skip


def message_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    """An assistant ``message`` output item of ``text``."""
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"type": "message", "id": item_id, "role": "assistant", "status": status,
            "content": [part] if status == "completed" else []}  # fmt: skip


def call_item(
    item_id: str, call_id: str, name: str, arguments: str, status: str = "completed"
) -> dict[str, Any]:
    """A ``function_call`` output item."""
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}  # fmt: skip


def usage_of(usage: object) -> dict[str, Any]:
    """The Responses ``usage`` of a chat completion's (zeros without one)."""
    given: Mapping[str, Any] = usage if isinstance(usage, Mapping) else {}
    read = [given.get(k) for k in ("prompt_tokens", "completion_tokens")]
    into, out = (n if isinstance(n, int) else 0 for n in read)
    cached = (given.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    reasoning = (given.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    return {
        "input_tokens": into, "output_tokens": out, "total_tokens": into + out,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens_details": {"reasoning_tokens": reasoning},
    }  # fmt: skip


def response_of(
    request: Mapping[str, Any], completion: Mapping[str, Any],
    response_id: str | None = None, created_at: float | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The completed Response of a chat ``completion`` answering ``request``."""
    response = shell(request, response_id or new_id("resp"), created_at or time.time())
    choices = completion.get("choices") or [{}]
    message = choices[0].get("message") or {}
    output: list[dict[str, Any]] = []
    content = message.get("content")
    if isinstance(content, str) and (content or not message.get("tool_calls")):
        output.append(message_item(new_id("msg"), content))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        output.append(call_item(new_id("fc"), str(call.get("id") or new_id("call")),
                                str(function.get("name", "")),
                                str(function.get("arguments", ""))))  # fmt: skip
    response.update(status="completed", output=output, usage=usage_of(completion.get("usage")))
    if choices[0].get("finish_reason") == "length":
        response.update(status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    return response
