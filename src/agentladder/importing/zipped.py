"""A ``.eval`` log's zip, read within bounds (``ImportBounds``).

The central directory is read entry by entry (not all at once, as ``zipfile`` does) and
refused past ``max_members`` entries. A member is opened only when the sizes its entry
declares are within ``max_member`` and ``max_ratio``; its stream then counts the bytes it
really yields and refuses, while streaming, more than declared (a header that lies),
more than the ratio allows, and, at its end, fewer than declared or a wrong CRC-32.
Stored, deflate and zstd members are read (Inspect writes zstd now, deflate before);
zstd frames may not ask for a window over ``ZSTD_WINDOW``.

Every refusal is ``InvalidInput("file", path, reason)``, the reason naming the member and
the bound.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, cast

from agentladder.errors import InvalidInput
from agentladder.importing.bounds import RATIO_GRACE, ImportBounds, shown_size

__all__ = ["ZSTD_WINDOW", "Member", "ZipLog"]

ZSTD_WINDOW = 1 << 25
"""The largest zstd window accepted (32 MiB): Inspect writes at zstd's default level,
whose frames ask for 2 MiB."""
_STORED, _DEFLATED, _ZSTD = 0, 8, 93
_EOCD = struct.Struct("<4sHHHHIIH")
_EOCD64_LOCATOR = struct.Struct("<4sIQI")
_EOCD64 = struct.Struct("<4sQHHIIQQQQ")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_MAX_U32, _MAX_U16 = 0xFFFFFFFF, 0xFFFF
_READ = 1 << 16


@dataclass(frozen=True, slots=True)
class Member:
    """One entry of the central directory."""

    name: str
    method: int
    flags: int
    crc: int
    compressed: int
    size: int
    offset: int


class ZipLog:
    """The members of the zip at ``path`` (the last entry of a name wins, as Inspect
    reads it), and bounded streams of them."""

    def __init__(self, path: Path, bounds: ImportBounds) -> None:
        self.path = path
        self.bounds = bounds
        self.file: BinaryIO = path.open("rb")
        try:
            self.members = self._directory()
        except BaseException:
            self.file.close()
            raise

    def close(self) -> None:
        """Close the file."""
        self.file.close()

    def refused(self, reason: str) -> InvalidInput:
        """The error naming this log."""
        return InvalidInput("file", str(self.path), reason)

    def _directory(self) -> dict[str, Member]:
        count, size, offset = self._end()
        if count > self.bounds.max_members:
            raise self.refused(f"has {count:,} members, over the bound of"
                               f" {self.bounds.max_members:,} (--max-members)")  # fmt: skip
        self.file.seek(offset)
        members: dict[str, Member] = {}
        buffer, at, left, seen = b"", 0, size, 0
        while left > 0 or at < len(buffer):
            if len(buffer) - at < _CENTRAL.size + 3 * _MAX_U16 and left > 0:
                more = self.file.read(min(left, _READ * 16))
                buffer, at, left = buffer[at:] + more, 0, left - len(more)
            if len(buffer) - at < _CENTRAL.size or buffer[at : at + 4] != b"PK\x01\x02":
                raise self.refused("is not a zip file (its central directory is damaged)")
            fields = _CENTRAL.unpack_from(buffer, at)
            name_len, extra_len, comment_len = fields[10], fields[11], fields[12]
            at += _CENTRAL.size
            name = buffer[at : at + name_len].decode("utf-8", errors="replace")
            extra = buffer[at + name_len : at + name_len + extra_len]
            at += name_len + extra_len + comment_len
            if at > len(buffer):
                raise self.refused("is not a zip file (its central directory is cut off)")
            seen += 1
            if seen > self.bounds.max_members:
                raise self.refused(f"has more than {self.bounds.max_members:,} members, the"
                                   " bound (--max-members)")  # fmt: skip
            compressed, full, local = _zip64(extra, fields[8], fields[9], fields[16])
            members[name] = Member(name, fields[4], fields[3], fields[7], compressed, full, local)
        return members

    def _end(self) -> tuple[int, int, int]:
        """(entries, central directory size, its offset) from the end records."""
        self.file.seek(0, 2)
        length = self.file.tell()
        tail_at = max(0, length - (_EOCD.size + _MAX_U16))
        self.file.seek(tail_at)
        tail = self.file.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < _EOCD.size:
            raise self.refused("is not a zip file (no end of central directory)")
        _, _, _, _, count, size, offset, _ = _EOCD.unpack_from(tail, at)
        if _MAX_U16 in (count,) or _MAX_U32 in (size, offset):
            locator_at = at - _EOCD64_LOCATOR.size
            if locator_at < 0 or tail[locator_at : locator_at + 4] != b"PK\x06\x07":
                raise self.refused("is not a zip file (no zip64 end record)")
            _, _, record_at, _ = _EOCD64_LOCATOR.unpack_from(tail, locator_at)
            self.file.seek(record_at)
            record = self.file.read(_EOCD64.size)
            if len(record) < _EOCD64.size or record[:4] != b"PK\x06\x06":
                raise self.refused("is not a zip file (its zip64 end record is damaged)")
            *_, count, size, offset = _EOCD64.unpack(record)
        if offset + size > length:
            raise self.refused("is not a zip file (its central directory is cut off)")
        return count, size, offset

    def open(self, member: Member) -> MemberStream:
        """A stream of ``member``'s bytes, its declared sizes checked first."""
        bounds, where = self.bounds, f"member {member.name}"
        if member.flags & 1:
            raise self.refused(f"{where} is encrypted")
        if member.size > bounds.max_member:
            raise self.refused(f"{where} declares {member.size:,} bytes decompressed, over the"
                               f" bound of {shown_size(bounds.max_member)} (--max-member)"
                               )  # fmt: skip
        if member.size > RATIO_GRACE and member.size > member.compressed * bounds.max_ratio:
            ratio = member.size / max(member.compressed, 1)
            raise self.refused(f"{where} declares {member.size:,} bytes from"
                               f" {member.compressed:,}, a ratio of {ratio:,.0f}, over the"
                               f" bound of {bounds.max_ratio:,} (--max-ratio)")  # fmt: skip
        if member.method not in (_STORED, _DEFLATED, _ZSTD):
            raise self.refused(f"{where} is compressed with method {member.method}, not one"
                               " Inspect writes (stored, deflate, zstd)")  # fmt: skip
        self.file.seek(member.offset)
        local = self.file.read(_LOCAL.size)
        if len(local) < _LOCAL.size or local[:4] != b"PK\x03\x04":
            raise self.refused(f"{where} is damaged (no local header)")
        fields = _LOCAL.unpack(local)
        start = member.offset + _LOCAL.size + fields[9] + fields[10]
        return MemberStream(self, member, start)


def _zip64(extra: bytes, compressed: int, size: int, offset: int) -> tuple[int, int, int]:
    """The sizes and offset, from the zip64 extra field where the entry says so."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<HH", extra, at)
        if kind == 1:
            values = iter(struct.unpack_from(f"<{length // 8}Q", extra, at + 4))
            size = next(values, size) if size == _MAX_U32 else size
            compressed = next(values, compressed) if compressed == _MAX_U32 else compressed
            offset = next(values, offset) if offset == _MAX_U32 else offset
            break
        at += 4 + length
    return compressed, size, offset


class _Raw:
    """The compressed bytes of a member, counted."""

    def __init__(self, file: BinaryIO, start: int, length: int) -> None:
        self.file = file
        self.at = start
        self.left = length
        self.read_so_far = 0

    def read(self, size: int = _READ, /) -> bytes:
        if self.left <= 0 or size == 0:
            return b""
        self.file.seek(self.at)
        data = self.file.read(min(size if size > 0 else _READ, self.left))
        self.at += len(data)
        self.left -= len(data)
        self.read_so_far += len(data)
        return data


class MemberStream:
    """A member's decompressed bytes, within its bounds (see the module docstring)."""

    def __init__(self, log: ZipLog, member: Member, start: int) -> None:
        self.log = log
        self.member = member
        self.raw = _Raw(log.file, start, member.compressed)
        self.produced = 0
        self.crc = 0
        self.ended = False
        self._inflate: Any = None
        self._zstd: Any = None
        if member.method == _DEFLATED:
            self._inflate = zlib.decompressobj(-15)
        elif member.method == _ZSTD:
            try:
                import zstandard  # noqa: PLC0415 (agentladder[inspect]; Inspect's own)
            except ImportError:
                needs = "needs the zstandard package: pip install 'agentladder[inspect]'"
                raise log.refused(f"member {member.name} is zstd, which {needs}") from None
            reader = zstandard.ZstdDecompressor(max_window_size=ZSTD_WINDOW)
            source = cast("IO[bytes]", self.raw)
            self._zstd = reader.stream_reader(source, read_across_frames=True)

    def read(self, size: int = _READ, /) -> bytes:
        """Up to ``size`` decompressed bytes; ``b""`` at the end, once it checked out
        (and for ``read(0)``)."""
        if self.ended or size == 0:
            return b""
        size = size if size > 0 else _READ
        data = self._next(size)
        if not data:
            self._end()
            return b""
        self.produced += len(data)
        self.crc = zlib.crc32(data, self.crc)
        self._check()
        return data

    def drain(self) -> None:
        """Read to the end (its size and CRC are checked there)."""
        while self.read(_READ):
            pass

    def _next(self, size: int) -> bytes:
        if self._inflate is not None:
            while True:
                pending = self._inflate.unconsumed_tail or self.raw.read(_READ)
                if not pending:
                    return bytes(self._inflate.flush(size))
                data = bytes(self._inflate.decompress(pending, size))
                if data or self._inflate.eof:
                    return data
        if self._zstd is not None:
            try:
                return bytes(self._zstd.read(size))
            except Exception as error:  # zstandard.ZstdError, a frame past the window
                why = " ".join(str(error).split())[:120]
                raise self.log.refused(f"member {self.member.name} is not valid zstd ({why})"
                                       ) from None  # fmt: skip
        return self.raw.read(min(size, self.raw.left))

    def _check(self) -> None:
        name, bounds = self.member.name, self.log.bounds
        if self.produced > self.member.size:
            raise self.log.refused(f"member {name} holds more than the {self.member.size:,}"
                                   " bytes its header declares (a header that lies)")  # fmt: skip
        compressed = max(self.raw.read_so_far, 1)
        if self.produced > RATIO_GRACE and self.produced > compressed * bounds.max_ratio:
            raise self.log.refused(f"member {name} decompresses {compressed:,} bytes into"
                                   f" {self.produced:,}, over the ratio bound of"
                                   f" {bounds.max_ratio:,} (--max-ratio)")  # fmt: skip

    def _end(self) -> None:
        name = self.member.name
        if self.produced != self.member.size:
            raise self.log.refused(f"member {name} holds {self.produced:,} bytes, not the"
                                   f" {self.member.size:,} its header declares")  # fmt: skip
        if self.crc != self.member.crc:
            raise self.log.refused(f"member {name} is damaged (its CRC-32 differs)")
        self.ended = True
