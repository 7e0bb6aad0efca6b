"""Opening results files that a writer still holds, that a killed writer left, or that are damaged.

HDF5 refuses to open a file in its normal read mode while the superblock's consistency flags
say a writer has it open (they stay set when the writer is killed), and it refuses a file
that is shorter than the end-of-file address its superblock records (a truncated copy).  Its
single-writer/multiple-reader (SWMR) read mode accepts both, but it retries every metadata
read that fails its checksum with a doubling wait (HDF5 2.0: 100 attempts), so a truncated
or damaged file keeps it waiting for hours, in C code that Ctrl-C cannot stop.  flexmbs
therefore opens a file in SWMR mode only when it has seen it grow (a live writer's file,
which SWMR keeps consistent).  Otherwise it reads the superblock itself:

* a clean file (flags 0, complete) opens in the normal read mode, which fails at once on a
  bad checksum;
* a file with the flags set, or a truncated one, opens in the normal read mode through
  `RepairedView`: a read-only view of the file whose superblock has the flags cleared and
  its end-of-file address set to the file's real end (checksum recomputed).  HDF5 then
  refuses every read of a missing part at once ("addr overflow"), and `intact_rows` tells
  which outputs of a time series lie wholly in the bytes that are there.

Superblock versions 2 and 3 (the ones files written with ``libver >= v110`` have; flexmbs
writes version 3), from the HDF5 File Format Specification, section II.A:

.. code:: text

    offset  size  field
    0       8     signature \\x89HDF\\r\\n\\x1a\\n
    8       1     version (2 or 3)
    9       1     size of offsets O (8)
    10      1     size of lengths
    11      1     file consistency flags (bit 0: open for writing, bit 2: SWMR writing)
    12      O     base address
    12+O    O     superblock extension address
    12+2O   O     end-of-file address (relative to the base address)
    12+3O   O     root group object header address
    12+4O   4     checksum: Jenkins' lookup3 hash of the bytes before it, initial value 0
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from ..frozen import FrozenFields

__all__ = ["Superblock", "read_superblock", "closed_header", "lookup3", "RepairedView", "intact_rows"]

SIGNATURE = b"\x89HDF\r\n\x1a\n"
_MASK = 0xFFFFFFFF


class Superblock(FrozenFields):
    """What `read_superblock` found at the start of a file (versions 2 and 3 only)."""

    # eof: end-of-file address recorded by the writer (absolute: base + address)
    # size: the file's size on disk [bytes]
    # header: the superblock, checksum included

    def __init__(self, version: int, flags: int, base: int, eof: int, size: int, header: bytes):
        self._set_fields(locals())

    @property
    def truncated(self) -> bool:
        return self.size < self.eof

    @property
    def open_for_writing(self) -> bool:
        return bool(self.flags & 0b101)


def read_superblock(path) -> Superblock | None:
    """The version 2/3 superblock at the start of ``path``; None for other versions or a
    superblock after a user block.

    Raises
    ------
    ValueError
        The file does not start with the HDF5 signature (and is too short to hold it
        further on), or its superblock fails its checksum.
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(12 + 4 * 8 + 4)
    if head[:8] != SIGNATURE:
        if size < 512 + 8:
            raise ValueError(f"{path} is not an HDF5 file ({size} bytes, no HDF5 signature)")
        return None                           # maybe a user block: let HDF5 search for the signature
    if len(head) < 12 or head[8] not in (2, 3):
        return None
    o = head[9]
    n = 12 + 4 * o + 4
    with open(path, "rb") as f:
        head = f.read(n)
    if len(head) < n:
        raise ValueError(f"{path} is damaged: it is {size} bytes long, shorter than its HDF5 superblock")
    stored = int.from_bytes(head[n - 4:], "little")
    if lookup3(head[:n - 4]) != stored:
        raise ValueError(f"{path} is damaged: its HDF5 superblock fails its checksum")
    base, _, eof, _ = (int.from_bytes(head[12 + i * o:12 + (i + 1) * o], "little") for i in range(4))
    return Superblock(version=head[8], flags=head[11], base=base, eof=base + eof, size=size, header=head)


def closed_header(superblock: Superblock, eof: int | None = None) -> bytes:
    """The superblock of a file that no writer holds: ``superblock.header`` with the
    consistency flags cleared and the end-of-file address ``eof`` (absolute; default the one
    recorded), its checksum recomputed (the field offsets are in the module docstring)."""
    head = bytearray(superblock.header)
    o = head[9]
    head[11] = 0
    eof = superblock.eof if eof is None else eof
    head[12 + 2 * o:12 + 3 * o] = (eof - superblock.base).to_bytes(o, "little")
    head[-4:] = lookup3(bytes(head[:-4])).to_bytes(4, "little")
    return bytes(head)


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _MASK


def lookup3(data: bytes, initval: int = 0) -> int:
    """Bob Jenkins' lookup3 ``hashlittle`` of ``data``: HDF5's metadata checksum.

    The bytes are taken 12 at a time as three little-endian 32-bit words a, b, c, each block
    mixed into the state; the last 1-12 bytes are zero-padded and the state finalised (an
    empty input returns the initial state c).
    """
    length = len(data)
    a = b = c = (0xDEADBEEF + length + initval) & _MASK
    if length == 0:
        return c
    pos = 0
    while length - pos > 12:
        a = (a + int.from_bytes(data[pos:pos + 4], "little")) & _MASK
        b = (b + int.from_bytes(data[pos + 4:pos + 8], "little")) & _MASK
        c = (c + int.from_bytes(data[pos + 8:pos + 12], "little")) & _MASK
        a = ((a - c) & _MASK) ^ _rot(c, 4); c = (c + b) & _MASK          # noqa: E702  (mix)
        b = ((b - a) & _MASK) ^ _rot(a, 6); a = (a + c) & _MASK          # noqa: E702
        c = ((c - b) & _MASK) ^ _rot(b, 8); b = (b + a) & _MASK          # noqa: E702
        a = ((a - c) & _MASK) ^ _rot(c, 16); c = (c + b) & _MASK         # noqa: E702
        b = ((b - a) & _MASK) ^ _rot(a, 19); a = (a + c) & _MASK         # noqa: E702
        c = ((c - b) & _MASK) ^ _rot(b, 4); b = (b + a) & _MASK          # noqa: E702
        pos += 12
    tail = data[pos:].ljust(12, b"\0")
    a = (a + int.from_bytes(tail[0:4], "little")) & _MASK
    b = (b + int.from_bytes(tail[4:8], "little")) & _MASK
    c = (c + int.from_bytes(tail[8:12], "little")) & _MASK
    c = (c ^ b) - _rot(b, 14) & _MASK                                    # final
    a = (a ^ c) - _rot(c, 11) & _MASK
    b = (b ^ a) - _rot(a, 25) & _MASK
    c = (c ^ b) - _rot(b, 16) & _MASK
    a = (a ^ c) - _rot(c, 4) & _MASK
    b = (b ^ a) - _rot(a, 14) & _MASK
    c = (c ^ b) - _rot(b, 24) & _MASK
    return c


class RepairedView(io.RawIOBase):
    """Read-only view of a results file for h5py's file-object driver, with a superblock
    whose consistency flags are cleared and whose end-of-file address is the file's real end
    (checksum recomputed).  HDF5 then refuses at once, as "addr overflow", every read of the
    missing part of a truncated file, which it would otherwise try to parse (a global heap
    read as zeros, for one, makes it loop forever)."""

    def __init__(self, path, superblock: Superblock):
        super().__init__()
        self._f = open(path, "rb")
        self._size = self._length = superblock.size
        self._head = closed_header(superblock, min(superblock.eof, superblock.size))
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        start = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._length}[whence]
        self._pos = max(start + offset, 0)
        return self._pos

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        n = max(min(len(view), self._length - self._pos), 0)
        if n == 0:
            return 0
        real = max(min(n, self._size - self._pos), 0)
        if real:
            self._f.seek(self._pos)
            got = self._f.readinto(view[:real])
            real = got or 0
        view[real:n] = bytes(n - real)
        if self._pos < len(self._head):
            k = min(len(self._head) - self._pos, n)
            view[:k] = self._head[self._pos:self._pos + k]
        self._pos += n
        return n

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()


def intact_rows(dataset, limit: int) -> int:
    """Number of leading rows (along axis 0) of an HDF5 dataset stored wholly below byte
    ``limit`` of the file: the outputs of a time series that a truncation left intact."""
    import h5py
    n = dataset.shape[0] if dataset.shape else 1
    if n == 0:
        return 0
    dsid = dataset.id
    layout = dsid.get_create_plist().get_layout()
    if layout == h5py.h5d.COMPACT:
        return n                                      # inside the object header, read already
    row_bytes = dataset.dtype.itemsize * int(np.prod(dataset.shape[1:], dtype=np.int64))
    if layout == h5py.h5d.CONTIGUOUS:
        offset = dsid.get_offset()
        if offset is None:
            return 0
        return int(np.clip((limit - offset) // max(row_bytes, 1), 0, n))
    rows_per_chunk = dataset.chunks[0]
    chunks = []
    for i in range(dsid.get_num_chunks()):
        info = dsid.get_chunk_info(i)
        whole = info.byte_offset is not None and info.byte_offset + info.size <= limit
        chunks.append((info.chunk_offset[0], whole))
    ok = 0
    for start, whole in sorted(chunks):
        if start != ok or not whole:
            break
        ok = start + rows_per_chunk
    return min(ok, n)
