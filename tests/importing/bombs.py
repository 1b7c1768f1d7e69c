"""Hostile import files, made quickly: an Inspect ``.eval`` log whose sample member
decompresses to far more than its file (a decompression bomb, optionally with a header
that lies about the size), and a JSONL file of one very long line.

The bomb's deflate stream is built from one compressed chunk repeated: after a full
flush the compressor starts afresh, so each identical chunk compresses to identical
bytes, and 1 GiB of JSON takes about a second to make instead of ten.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

__all__ = ["eval_bomb", "long_line", "zip_file"]

CHUNK = 1 << 24
_DEFLATED = 8


def _deflate_repeated(prefix: bytes, filler: int, suffix: bytes) -> tuple[bytes, int, int]:
    """Raw deflate of ``prefix + b"x" * filler + suffix`` (filler a multiple of CHUNK):
    (compressed, crc32, size)."""
    assert filler % CHUNK == 0
    chunk = b"x" * CHUNK
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    body = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.compress(suffix) + compressor.flush(zlib.Z_FINISH)
    crc = zlib.crc32(prefix)
    chunk_crc_runs = filler // CHUNK
    for _ in range(chunk_crc_runs):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(suffix, crc)
    data = head + body * chunk_crc_runs + tail
    return data, crc, len(prefix) + filler + len(suffix)


def zip_file(path: Path, members: list[tuple[str, bytes, int, int, int]]) -> Path:
    """A zip of ``(name, deflated data, crc32, size declared, method)`` members, written
    by hand so that the declared size can be anything."""
    out = bytearray()
    central = bytearray()
    for name, data, crc, size, method in members:
        encoded = name.encode()
        offset = len(out)
        fields = (20, 0, method, 0, 0x21, crc, len(data), size, len(encoded), 0)
        out += b"PK\x03\x04" + struct.pack("<HHHHHIIIHH", *fields) + encoded + data
        central += b"PK\x01\x02" + struct.pack(
            "<HHHHHHIIIHHHHHII", 20, 20, 0, method, 0, 0x21, crc, len(data), size,
            len(encoded), 0, 0, 0, 0, 0, offset,
        ) + encoded  # fmt: skip
    start = len(out)
    out += central
    out += b"PK\x05\x06" + struct.pack(
        "<HHHHIIH", 0, 0, len(members), len(members), len(central), start, 0
    )
    path.write_bytes(bytes(out))
    return path


def eval_bomb(path: Path, header: bytes, size: int, declared: int | None = None) -> Path:
    """An ``.eval`` log: ``header`` as ``header.json`` and one sample whose JSON is
    ``size`` bytes (about; a string of ``x`` fills it), declared as ``declared`` bytes
    (default: its real size)."""
    prefix = b'{"id": 1, "epoch": 1, "input": "'
    suffix = b'", "target": "", "scores": {"m": {"value": "C"}}}'
    filler = (size - len(prefix) - len(suffix)) // CHUNK * CHUNK
    data, crc, real = _deflate_repeated(prefix, filler, suffix)
    head = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = head.compress(header) + head.flush()
    return zip_file(
        path,
        [
            ("header.json", packed, zlib.crc32(header), len(header), _DEFLATED),
            ("samples/1_epoch_1.json", data, crc, real if declared is None else declared,
             _DEFLATED),
        ],
    )  # fmt: skip


def long_line(path: Path, size: int, before: str = "", after: str = "") -> Path:
    """A JSONL file of one judgment whose line is ``size`` bytes (an ``output`` of ``x``),
    written in pieces; between the lines ``before`` and ``after`` when given (else
    without a newline)."""
    prefix = b'{"agent_id": "a1", "contract_id": "c1", "score": 7, "output": "'
    with path.open("wb") as out:
        if before:
            out.write(before.encode() + b"\n")
        out.write(prefix)
        left = size - len(prefix) - 2
        while left > 0:
            piece = min(left, CHUNK)
            out.write(b"x" * piece)
            left -= piece
        out.write(b'"}')
        if after:
            out.write(b"\n" + after.encode() + b"\n")
    return path
