"""What an image in a chat request costs, in tokens, by OpenAI's published rule for its
vision models (pure: no I/O, nothing fetched).

``detail: low``: 85 tokens. Otherwise (``high``, ``auto`` or none) the image is scaled to
fit in 2048 x 2048, then so that its shorter side is at most 768 px, and costs 170 tokens
per 512 px tile plus 85. An inline image (a ``data:`` URL) has its width and height read
from its header (PNG, GIF, JPEG; at most its first 48 KiB decoded); an image whose size
cannot be read (another format, a damaged header) or that is named by URL (the gateway
never fetches what a caller names) costs ``UNKNOWN_TOKENS``, what a square photo of
768 px or more costs at high detail (OpenAI's own example: 1024 x 1024, 765 tokens).
"""

from __future__ import annotations

import base64
import binascii
import math

__all__ = ["LOW_TOKENS", "UNKNOWN_TOKENS", "image_size", "image_tokens", "tile_tokens"]

LOW_TOKENS = 85
UNKNOWN_TOKENS = 765
_TILE_TOKENS = 170
_HEAD_CHARS = 65_536
"""The most of a data URL's base64 decoded to find the image's size (48 KiB)."""
_JPEG_FRAMES = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD})


def tile_tokens(width: int, height: int) -> int:
    """The tokens of a ``width`` x ``height`` image at high detail (the module's rule)."""
    if width <= 0 or height <= 0:
        return UNKNOWN_TOKENS
    scale = min(1.0, 2048 / max(width, height))
    width_f, height_f = width * scale, height * scale
    scale = min(1.0, 768 / min(width_f, height_f))
    tiles = math.ceil(width_f * scale / 512) * math.ceil(height_f * scale / 512)
    return _TILE_TOKENS * tiles + LOW_TOKENS


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """A JPEG's size from its first frame header (SOFn), walking its segments."""
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _JPEG_FRAMES:
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            return int.from_bytes(data[at + 7 : at + 9], "big"), height
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """The (width, height) an image's first bytes declare (PNG, GIF, JPEG), else None."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    return None


def _inline(url: str) -> bytes | None:
    """The first bytes of a base64 ``data:`` URL's image, else None."""
    head, comma, payload = url[: _HEAD_CHARS + 200].partition(",")
    if not comma or not head.endswith(";base64"):
        return None
    text = "".join(payload[:_HEAD_CHARS].split())
    try:
        return base64.b64decode(text[: len(text) // 4 * 4])
    except (binascii.Error, ValueError):
        return None


def image_tokens(url: object, detail: object = None) -> int:
    """The tokens of an ``image_url`` part (``url``, ``detail``): the module's rule."""
    if detail == "low":
        return LOW_TOKENS
    if not isinstance(url, str) or not url.startswith("data:"):
        return UNKNOWN_TOKENS
    data = _inline(url)
    size = None if data is None else image_size(data)
    return UNKNOWN_TOKENS if size is None else tile_tokens(*size)
