"""A Responses API request (``POST /v1/responses``) as the chat-completions body the
gateway forwards (docs/gateway.md, "The Responses API"): pure translation, no I/O.

- ``instructions`` is a system message first; ``input`` a string (one user message) or
  a list of items: messages (``role`` and ``content``: a string, or parts ``input_text``
  / ``output_text``; ``input_image`` becomes an ``image_url`` part), ``function_call``
  items (an assistant message's ``tool_calls``, consecutive ones in one message) and
  ``function_call_output`` items (``tool`` messages).
- ``tools``: function tools only (``{type: function, name, description, parameters,
  strict}``); another type is refused naming it. ``tool_choice`` likewise.
- ``max_output_tokens`` is ``max_tokens``; ``text.format`` is ``response_format``;
  ``reasoning.effort`` is ``reasoning_effort``; ``temperature``, ``top_p``,
  ``parallel_tool_calls``, ``user``, ``stream`` keep their names.
- ``previous_response_id`` and ``conversation`` are refused: the gateway keeps no
  response; ``background: true`` too. ``store``, ``metadata``, ``include`` and
  ``truncation`` are read and dropped (nothing is stored; the rest has no chat
  equivalent). Any other field is passed on unchanged, as the chat route passes its body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentladder.errors import InvalidInput

__all__ = ["NOT_STORED", "chat_body"]

NOT_STORED = (
    "needs stored responses, which this gateway does not keep; send the conversation in input"
)
_RENAMED = {"max_output_tokens": "max_tokens"}
_KEPT = ("model", "temperature", "top_p", "parallel_tool_calls", "user", "stream")
_DROPPED = frozenset({"store", "metadata", "include", "truncation"})
_HANDLED = frozenset(
    {"input", "instructions", "tools", "tool_choice", "text", "reasoning", "background",
     "previous_response_id", "conversation", *_RENAMED, *_KEPT, *_DROPPED}
)  # fmt: skip
_ROLES = frozenset({"user", "assistant", "system", "developer"})


def chat_body(request: Mapping[str, Any]) -> dict[str, Any]:
    """The chat-completions body of a Responses ``request``; ``InvalidInput`` naming the
    field for what cannot be bridged."""
    for stored in ("previous_response_id", "conversation"):
        if request.get(stored) is not None:
            raise InvalidInput(stored, request[stored], NOT_STORED)
    if request.get("background") is True:
        raise InvalidInput("background", True, "is not supported: the gateway keeps no response")
    body: dict[str, Any] = {k: v for k, v in request.items() if k not in _HANDLED}
    body.update({k: request[k] for k in _KEPT if k in request})
    body.update({new: request[old] for old, new in _RENAMED.items() if old in request})
    body["messages"] = _instructions(request.get("instructions")) + messages(request.get("input"))
    if request.get("tools") is not None:
        body["tools"] = tools(request["tools"])
    if request.get("tool_choice") is not None:
        body["tool_choice"] = tool_choice(request["tool_choice"])
    text = request.get("text")
    if text is not None:
        form = _format(text)
        if form is not None:
            body["response_format"] = form
    effort = _effort(request.get("reasoning"))
    if effort is not None:
        body["reasoning_effort"] = effort
    if body.get("stream") is True:
        body["stream_options"] = {"include_usage": True}
    return body


def _instructions(instructions: object) -> list[dict[str, Any]]:
    if instructions is None:
        return []
    if not isinstance(instructions, str):
        raise InvalidInput("instructions", instructions, "must be a string")
    return [{"role": "system", "content": instructions}]


def messages(given: object) -> list[dict[str, Any]]:
    """The chat messages of ``input`` (a string or a list of items)."""
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    if not isinstance(given, list) or not given:
        raise InvalidInput("input", given, "must be a string or a non-empty list of items")
    found: list[dict[str, Any]] = []
    for index, item in enumerate(given):
        where = f"input[{index}]"
        if not isinstance(item, Mapping):
            raise InvalidInput(where, item, "must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            found.append(_message(item, where))
        elif kind == "function_call":
            call = _call(item, where)
            last = found[-1] if found else None
            if last is not None and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                found.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            if not isinstance(output, str):
                output = json.dumps(output)
            found.append({"role": "tool", "tool_call_id": _text(item, "call_id", where),
                          "content": output})  # fmt: skip
        elif kind == "reasoning":
            continue  # a model's reasoning summary: nothing a chat backend reads
        else:
            raise InvalidInput(f"{where}.type", kind, "is not supported by the gateway: "
                               "message, function_call or function_call_output")  # fmt: skip
    return found


def _text(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{where}.{key}", value, "must be a non-empty string")
    return value


def _call(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    arguments = item.get("arguments", "")
    if not isinstance(arguments, str):
        raise InvalidInput(f"{where}.arguments", arguments, "must be a string")
    function = {"name": _text(item, "name", where), "arguments": arguments}
    return {"id": _text(item, "call_id", where), "type": "function", "function": function}


def _message(item: Mapping[str, Any], where: str) -> dict[str, Any]:
    role = item.get("role")
    if role not in _ROLES:
        raise InvalidInput(f"{where}.role", role, f"must be one of {', '.join(sorted(_ROLES))}")
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise InvalidInput(f"{where}.content", content, "must be a string or a list of parts")
    parts = [_part(part, f"{where}.content[{n}]") for n, part in enumerate(content)]
    if role != "user" and all(part["type"] == "text" for part in parts):
        return {"role": role, "content": "".join(part["text"] for part in parts)}
    return {"role": role, "content": parts}


def _part(part: object, where: str) -> dict[str, Any]:
    if not isinstance(part, Mapping):
        raise InvalidInput(where, part, "must be an object")
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text"):
        text = part.get("text")
        if not isinstance(text, str):
            raise InvalidInput(f"{where}.text", text, "must be a string")
        return {"type": "text", "text": text}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image = {"url": part["image_url"], "detail": part.get("detail", "auto")}
        return {"type": "image_url", "image_url": image}
    raise InvalidInput(f"{where}.type", kind, "is not supported by the gateway: input_text, "
                       "output_text or input_image with an image_url")  # fmt: skip


def tools(given: object) -> list[dict[str, Any]]:
    """The chat ``tools`` of Responses function tools; another type is refused."""
    if not isinstance(given, list):
        raise InvalidInput("tools", given, "must be a list")
    found = []
    for index, tool in enumerate(given):
        where = f"tools[{index}]"
        if not isinstance(tool, Mapping):
            raise InvalidInput(where, tool, "must be an object")
        kind = tool.get("type")
        if kind != "function":
            raise InvalidInput(f"{where}.type", kind, f"tool type {kind} is not supported by "
                               "the gateway, which bridges to chat completions: only function"
                               " tools")  # fmt: skip
        function = {"name": _text(tool, "name", where)}
        function.update({k: tool[k] for k in ("description", "parameters", "strict")
                         if tool.get(k) is not None})  # fmt: skip
        found.append({"type": "function", "function": function})
    return found


def tool_choice(given: object) -> object:
    """The chat ``tool_choice``: ``none``, ``auto``, ``required`` or one function."""
    if given in ("none", "auto", "required"):
        return given
    if isinstance(given, Mapping) and given.get("type") == "function":
        return {"type": "function", "function": {"name": _text(given, "name", "tool_choice")}}
    raise InvalidInput("tool_choice", given, "must be none, auto, required or a function")


def _format(text: object) -> dict[str, Any] | None:
    if not isinstance(text, Mapping):
        raise InvalidInput("text", text, "must be an object")
    form = text.get("format")
    if form is None:
        return None
    if not isinstance(form, Mapping):
        raise InvalidInput("text.format", form, "must be an object")
    kind = form.get("type")
    if kind in {"text", "json_object"}:
        return {"type": kind}
    if kind == "json_schema":
        schema = {k: v for k, v in form.items() if k != "type"}
        return {"type": "json_schema", "json_schema": schema}
    raise InvalidInput("text.format.type", kind, "must be text, json_object or json_schema")


def _effort(reasoning: object) -> object:
    if reasoning is None:
        return None
    if not isinstance(reasoning, Mapping):
        raise InvalidInput("reasoning", reasoning, "must be an object")
    return reasoning.get("effort")
