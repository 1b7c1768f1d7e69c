"""A chat-completions stream as the Responses API's server-sent events (docs/gateway.md,
"The Responses API").

``Bridge`` is pure: each chat chunk in, the Responses events it makes out, numbered by
``sequence_number``: ``response.created`` and ``response.in_progress`` first; text opens
a ``message`` item (``response.output_item.added``, ``response.content_part.added``) and
comes as ``response.output_text.delta``; each tool call is a ``function_call`` item whose
arguments come as ``response.function_call_arguments.delta``. An item is closed (its
``.done`` events) when the next one opens or the stream ends; the end is
``response.completed`` with the whole Response (``response.incomplete`` when the answer
stopped at its token limit). A chat error event, or a stream that broke, ends it with an
``error`` event and ``response.failed``.

``events`` reads the gateway's chat stream (bytes of ``data:`` lines) through a
``Bridge`` and writes each event as ``event: <type>`` and ``data: <json>``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agentladder.services.gateway.responses_answer import (
    call_item,
    message_item,
    new_id,
    shell,
    usage_of,
)

__all__ = ["Bridge", "events"]


class Bridge:
    """One stream's translation; see the module."""

    def __init__(self, request: Mapping[str, Any], response_id: str, created_at: float) -> None:
        self.response = shell(request, response_id, created_at)
        self.sequence = 0
        self.items: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: object = None
        self.finish_reason: object = None
        self.ended = False

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"type": kind, "sequence_number": self.sequence, **fields}
        self.sequence += 1
        return event

    def start(self) -> list[dict[str, Any]]:
        """The stream's first events."""
        return [self._event("response.created", response=dict(self.response)),
                self._event("response.in_progress", response=dict(self.response))]  # fmt: skip

    def _index(self) -> int:
        return len(self.items) - 1

    def _close(self) -> list[dict[str, Any]]:
        """The open item's ``.done`` events."""
        item, self.open = self.open, None
        if item is None:
            return []
        index = self.items.index(item)
        out = []
        if item["type"] == "message":
            text = "".join(item.pop("pieces"))
            done = message_item(item["id"], text)
            part = done["content"][0]
            out += [
                self._event("response.output_text.done", item_id=item["id"],
                            output_index=index, content_index=0, text=text, logprobs=[]),
                self._event("response.content_part.done", item_id=item["id"],
                            output_index=index, content_index=0, part=part),
            ]  # fmt: skip
        else:
            item["arguments"] = "".join(item.pop("pieces"))
            done = call_item(item["id"], item["call_id"], item["name"], item["arguments"])
            out.append(self._event("response.function_call_arguments.done", item_id=item["id"],
                                   output_index=index, name=item["name"],
                                   arguments=item["arguments"]))  # fmt: skip
        self.items[index] = done
        out.append(self._event("response.output_item.done", output_index=index, item=done))
        return out

    def _text(self, delta: str) -> list[dict[str, Any]]:
        out = []
        if self.open is None or self.open["type"] != "message":
            out += self._close()
            item = message_item(new_id("msg"), "", status="in_progress")
            self.items.append({**item, "pieces": []})
            self.open = self.items[-1]
            index = self._index()
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            out += [
                self._event("response.output_item.added", output_index=index, item=item),
                self._event("response.content_part.added", item_id=item["id"],
                            output_index=index, content_index=0, part=part),
            ]  # fmt: skip
        self.open["pieces"].append(delta)
        out.append(self._event("response.output_text.delta", item_id=self.open["id"],
                               output_index=self.items.index(self.open), content_index=0,
                               delta=delta, logprobs=[]))  # fmt: skip
        return out

    def _call(self, call: Mapping[str, Any]) -> list[dict[str, Any]]:
        out = []
        number = call.get("index", 0)
        function = call.get("function") or {}
        item = self.calls.get(number)
        if item is None:
            out += self._close()
            item = call_item(new_id("fc"), str(call.get("id") or new_id("call")),
                             str(function.get("name") or ""), "", status="in_progress")  # fmt: skip
            self.calls[number] = item
            self.items.append(item)
            self.open = item
            out.append(self._event("response.output_item.added", output_index=self._index(),
                                   item=dict(item)))  # fmt: skip
            item["pieces"] = []
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments and item is self.open:
            item["pieces"].append(arguments)
            index = self.items.index(item)
            delta = self._event("response.function_call_arguments.delta", item_id=item["id"],
                                output_index=index, delta=arguments)  # fmt: skip
            out.append(delta)
        return out

    def chunk(self, chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The events of one chat chunk (an error event ends the stream: ``fail``)."""
        if chunk.get("error"):
            error = chunk["error"]
            message = error.get("message") if isinstance(error, Mapping) else str(error)
            return self.fail(str(message or "the agent's stream broke"))
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        out = []
        for choice in (chunk.get("choices") or [])[:1]:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str) and content:
                out += self._text(content)
            for call in delta.get("tool_calls") or []:
                out += self._call(call)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return out

    def finish(self) -> list[dict[str, Any]]:
        """The stream's last events (``response.completed``)."""
        if self.ended:
            return []
        self.ended = True
        out = [] if self.items else self._text("")
        out += self._close()
        self.response.update(status="completed", output=self.items, usage=usage_of(self.usage))
        kind = "response.completed"
        if self.finish_reason == "length":
            kind = "response.incomplete"
            self.response.update(status="incomplete",
                                 incomplete_details={"reason": "max_output_tokens"})  # fmt: skip
        return [*out, self._event(kind, response=self.response)]

    def fail(self, message: str) -> list[dict[str, Any]]:
        """The events ending a stream that broke: ``error``, ``response.failed``."""
        if self.ended:
            return []
        self.ended = True
        error = {"code": "server_error", "message": message}
        if self.open is not None:  # what came of it, as far as it went
            item, self.open = self.open, None
            sofar = "".join(item.pop("pieces"))
            if item["type"] == "message":
                done = message_item(item["id"], sofar)
            else:
                done = call_item(item["id"], item["call_id"], item["name"], sofar)
            self.items[self.items.index(item)] = {**done, "status": "incomplete"}
        self.response.update(status="failed", output=self.items, error=error,
                             usage=usage_of(self.usage))  # fmt: skip
        return [self._event("error", code="server_error", message=message, param=None),
                self._event("response.failed", response=self.response)]  # fmt: skip


def _sse(event: Mapping[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


async def events(chat: AsyncIterator[bytes], bridge: Bridge) -> AsyncIterator[bytes]:
    """The Responses events of the gateway's chat stream ``chat``; closing this closes it
    (the caller went away: the chat stream's end is recorded as such)."""
    pending = b""
    try:
        for event in bridge.start():
            yield _sse(event)
        async for piece in chat:
            pending += piece
            *lines, pending = pending.split(b"\n")
            for line in lines:
                data = line.strip()
                if not data.startswith(b"data:"):
                    continue
                data = data[5:].strip()
                if data == b"[DONE]":
                    continue
                try:
                    chunk = json.loads(data)
                except (ValueError, RecursionError):
                    continue
                if isinstance(chunk, Mapping):
                    for event in bridge.chunk(chunk):
                        yield _sse(event)
        for event in bridge.finish():
            yield _sse(event)
    finally:
        close = getattr(chat, "aclose", None)
        if close is not None:
            await close()
