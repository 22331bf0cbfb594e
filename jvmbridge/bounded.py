"""Reads of what another party wrote (a JVM's attach reply, a JDK's release file) that hold at
most a stated number of bytes, however much the other side has to give."""
from __future__ import annotations

from typing import Callable

_CHUNK = 65536


def read_at_most(read: Callable[[int], bytes], limit: int) -> bytes:
    """What ``read(n)`` gives until it gives b"" (the end), but at most ``limit`` + 1 bytes: a
    result longer than ``limit`` says there was more, which was left unread."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
