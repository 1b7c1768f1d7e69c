"""``estimate.py`` and ``images.py``: what a request and its answer are charged when the
provider reports no usage counts everything sent, not only ``content``."""

from __future__ import annotations

import base64
import json
import struct

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from agentladder.services.gateway.estimate import (
    Tally,
    json_chars,
    message_chars,
    prompt_tokens,
    request_tokens,
)
from agentladder.services.gateway.images import (
    LOW_TOKENS,
    UNKNOWN_TOKENS,
    image_size,
    image_tokens,
    tile_tokens,
)

ASK = [{"role": "user", "content": "x" * 400}]
PLAIN = st.characters(exclude_characters='"\\', exclude_categories=("Cc", "Cs"))


def _png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + header + b"\0" * 4000


def _jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9
    frame = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, height, width) + b"\0" * 10
    return b"\xff\xd8" + app0 + frame + b"\0" * 4000


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\0" * 100


def _data_url(image: bytes, kind: str = "png") -> str:
    return f"data:image/{kind};base64," + base64.b64encode(image).decode()


def _with_image(url: str, detail: str | None = None) -> list[dict[str, object]]:
    image: dict[str, object] = {"url": url}
    if detail is not None:
        image["detail"] = detail
    parts = [{"type": "text", "text": "x" * 400}, {"type": "image_url", "image_url": image}]
    return [{"role": "user", "content": parts}]


def test_text_alone_is_four_characters_a_token() -> None:
    """The old rule still holds for plain text: 400 characters, 100 tokens."""
    assert prompt_tokens(ASK) == 100
    assert request_tokens({"messages": ASK}) == 100


def test_the_requests_tools_functions_and_response_format_are_counted() -> None:
    """A 1 MB ``tools`` field costs its JSON's characters, not nothing; so do ``functions``
    and ``response_format``."""
    tools = [{"type": "function", "function": {"name": "f", "description": "d" * 1_000_000}}]
    charged = request_tokens({"messages": ASK, "tools": tools})
    assert charged == 100 + json_chars(tools) // 4
    assert charged > 250_000
    schema = {"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object"}}}
    functions = [{"name": "g", "parameters": {"type": "object"}}]
    body = {"messages": ASK, "response_format": schema, "functions": functions}
    assert request_tokens(body) == 100 + (json_chars(schema) + json_chars(functions)) // 4


def test_tool_calls_and_tool_results_in_the_conversation_are_counted() -> None:
    """An assistant's tool calls (names, arguments), a legacy ``function_call`` and the
    tool's result are text the model reads."""
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "save", "arguments": "a" * 2000}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "r" * 800}]},
        {"role": "assistant", "content": "", "function_call": {"name": "f", "arguments": "b" * 96}},
    ]  # fmt: skip
    assert prompt_tokens(messages) == (4 + 2000 + 800 + 1 + 96) // 4


@seed(20261207)
@settings(max_examples=100, derandomize=True, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(PLAIN, max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(PLAIN, max_size=4), inner)
        ),
        max_leaves=20,
    )
)
def test_json_chars_is_the_compact_jsons_length(value: object) -> None:
    """``json_chars`` counts what ``json.dumps`` (compact, unescaped) would write for
    strings that need no escape (an escape is counted as its one character)."""
    expected = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    assert json_chars(value) == expected


def test_json_chars_takes_any_depth() -> None:
    """A field nested 100,000 deep is counted, not a recursion error."""
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    assert json_chars(deep) == 200_003


@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [(1024, 1024, 765), (2048, 4096, 1105), (512, 512, 255), (4000, 3000, 765), (100, 100, 255)],
)
def test_the_tile_rule_matches_openais_examples(width: int, height: int, tokens: int) -> None:
    """OpenAI's published figures: 1024 x 1024 at high detail 765, 2048 x 4096 1105."""
    assert tile_tokens(width, height) == tokens


@pytest.mark.parametrize(
    ("image", "kind", "size"),
    [(_png(1600, 900), "png", (1600, 900)), (_jpeg(640, 480), "jpeg", (640, 480)),
     (_gif(30, 20), "gif", (30, 20))],
)  # fmt: skip
def test_an_inline_image_is_charged_by_its_declared_size(
    image: bytes, kind: str, size: tuple[int, int]
) -> None:
    """A ``data:`` image's width and height are read from its header; its tokens by the
    tile rule, added to the text's."""
    assert image_size(image) == size
    messages = _with_image(_data_url(image, kind))
    assert prompt_tokens(messages) == 100 + tile_tokens(*size)


def test_a_megabyte_inline_image_costs_tokens() -> None:
    """A 1 MB inline image of unreadable format costs the fixed count; at ``detail: low``
    85; an image by URL the fixed count (never fetched)."""
    blob = _data_url(b"\x00\x01" * 500_000, "webp")
    assert prompt_tokens(_with_image(blob)) == 100 + UNKNOWN_TOKENS
    assert prompt_tokens(_with_image(blob, "low")) == 100 + LOW_TOKENS
    assert prompt_tokens(_with_image("https://example.com/cat.png")) == 100 + UNKNOWN_TOKENS
    assert image_tokens("data:image/png;base64,!!!not base64") == UNKNOWN_TOKENS


def test_an_answers_tool_calls_refusal_and_reasoning_are_counted() -> None:
    """An answer's estimate counts ``delta.tool_calls`` arguments and names,
    ``function_call``, ``refusal``, ``reasoning_content`` and ``reasoning`` as well as
    ``content``; only ``content`` is kept for a check."""
    tally = Tally(text=[])
    deltas = [
        {"content": "abcd"},
        {"tool_calls": [{"index": 0, "function": {"name": "save", "arguments": "a" * 200_000}}]},
        {"function_call": {"arguments": "b" * 4000}},
        {"refusal": "r" * 400},
        {"reasoning_content": "t" * 800, "reasoning": "u" * 800},
    ]  # fmt: skip
    for delta in deltas:
        tally.see_choices([{"index": 0, "delta": delta}], "delta")
    assert tally.chars == 4 + 4 + 200_000 + 4000 + 400 + 1600
    assert tally.usage().output_tokens == tally.chars // 4
    assert tally.text == ["abcd"]


def test_a_message_that_is_no_object_counts_nothing() -> None:
    """Garbage where a message should be is no text: 0, never an error."""
    assert message_chars("oops") == 0
    assert prompt_tokens("not a list") == 0
    assert prompt_tokens([None, 3, {"content": 5}]) == 0
