"""What a gateway request and its answer use, in tokens, when the provider does not say:
pure functions over the decoded JSON (no I/O), and ``Tally``, which keeps an answer's
reported usage or counts what it holds.

Four characters are one token, as deliberation calls estimate. A request counts every
message's text parts, refusals and reasoning text, its tool calls (names and arguments,
and the legacy ``function_call``), tool results (a tool message's content), the request's
``tools``, ``functions`` and ``response_format`` (the length of their compact JSON), and
each image at a fixed rule (``images.py``). An answer counts, in each choice's message or
delta, ``content``, ``refusal``, ``reasoning_content`` and ``reasoning``, tool calls'
names and arguments and ``function_call``: so what is sent in any of those fields is
charged, not only ``content`` (docs/gateway.md, "Estimates").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentladder.providers.base import Usage
from agentladder.services.gateway.images import image_tokens

__all__ = [
    "CHARS_PER_TOKEN",
    "KEEP_CHARS",
    "Tally",
    "json_chars",
    "message_chars",
    "prompt_tokens",
    "request_tokens",
]

CHARS_PER_TOKEN = 4
KEEP_CHARS = 100_000
"""The most of a streamed answer's text kept for its check (the judge sees less)."""
_TEXT_FIELDS = ("content", "refusal", "reasoning_content", "reasoning")
"""A message's (or a delta's) fields of text, counted when they are strings."""
_REQUEST_FIELDS = ("tools", "functions", "response_format")
"""The request's fields sent to the model besides its messages, counted as JSON."""


def json_chars(value: object) -> int:
    """The length of ``value``'s compact JSON (``separators=(",", ":")``, unescaped),
    counted without building it and without recursion (any depth)."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            total += 2 + max(len(item) - 1, 0)  # braces, commas
            for key, inner in item.items():
                total += len(str(key)) + 3  # quotes, colon
                stack.append(inner)
        elif isinstance(item, list | tuple):
            total += 2 + max(len(item) - 1, 0)
            stack.extend(item)
        elif item is None or isinstance(item, bool):
            total += 4 if item is None or item else 5
        else:
            total += len(repr(item))
    return total


def _function_chars(function: object) -> int:
    """A call's ``name`` and ``arguments`` (strings) counted."""
    if not isinstance(function, Mapping):
        return 0
    parts = (function.get("name"), function.get("arguments"))
    return sum(len(v) for v in parts if isinstance(v, str))


def _part_chars(part: object) -> int:
    """The characters of one content part (``text``, ``refusal``); its image's tokens are
    counted apart (``_images``)."""
    if not isinstance(part, Mapping):
        return 0
    return sum(len(v) for v in (part.get("text"), part.get("refusal")) if isinstance(v, str))


def message_chars(message: object) -> int:
    """The characters a message (a request's, an answer's, or a stream's delta) holds in
    its text fields, its content parts, its tool calls and its ``function_call``."""
    if not isinstance(message, Mapping):
        return 0
    chars = 0
    for name in _TEXT_FIELDS:
        value = message.get(name)
        if isinstance(value, str):
            chars += len(value)
        elif name == "content" and isinstance(value, list):
            chars += sum(_part_chars(part) for part in value)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        chars += sum(_function_chars(c.get("function")) for c in calls if isinstance(c, Mapping))
    return chars + _function_chars(message.get("function_call"))


def _images(message: object) -> int:
    """The tokens of a message's image parts (``image_url``)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return 0
    tokens = 0
    for part in content:
        image = part.get("image_url") if isinstance(part, Mapping) else None
        if isinstance(image, str):
            image = {"url": image}
        if isinstance(image, Mapping):
            tokens += image_tokens(image.get("url"), image.get("detail"))
    return tokens


def prompt_tokens(messages: object) -> int:
    """The tokens of a conversation (a list of messages): their characters, four to a
    token, and their images' tokens."""
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        return 0
    chars = sum(message_chars(message) for message in messages)
    return chars // CHARS_PER_TOKEN + sum(_images(message) for message in messages)


def request_tokens(body: Mapping[str, object]) -> int:
    """The tokens of a chat request: its messages (``prompt_tokens``) and its ``tools``,
    ``functions`` and ``response_format`` as JSON."""
    extra = sum(json_chars(body[name]) for name in _REQUEST_FIELDS if body.get(name) is not None)
    return prompt_tokens(body.get("messages")) + extra // CHARS_PER_TOKEN


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


@dataclass
class Tally:
    """What an answer used: the reported usage, else the characters seen."""

    prompt: int = 0
    chars: int = 0
    reported: Usage | None = None
    text: list[str] | None = None
    """The answer's ``content``, kept (up to ``KEEP_CHARS``) once this is a list: a
    check's."""
    kept: int = 0

    def see_usage(self, usage: object) -> None:
        """A ``usage`` object of the answer (or of a stream's chunk)."""
        if not isinstance(usage, Mapping):
            return
        given, made = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        if given is not None and made is not None:
            self.reported = Usage(input_tokens=given, output_tokens=made)

    def see_choices(self, choices: object, key: str) -> None:
        """The choices' ``key`` (message, or delta in a stream): every field counted
        (``message_chars``), the content kept for a check."""
        if not isinstance(choices, list):
            return
        for choice in choices:
            part = choice.get(key) if isinstance(choice, Mapping) else None
            if not isinstance(part, Mapping):
                continue
            self.chars += message_chars(part)
            content = part.get("content")
            if isinstance(content, str) and self.text is not None and self.kept < KEEP_CHARS:
                piece = content[: KEEP_CHARS - self.kept]
                self.text.append(piece)
                self.kept += len(piece)

    def usage(self) -> Usage:
        """The reported usage, else the estimate."""
        if self.reported is not None:
            return self.reported
        return Usage(input_tokens=self.prompt, output_tokens=self.chars // CHARS_PER_TOKEN)
