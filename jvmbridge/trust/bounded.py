"""Reads of what another party wrote (a JVM's attach reply, a JDK's release file, saved runs,
hosts' documents, a child's replies) that hold at most a stated number of bytes, however much the
other side has to give, or wait no longer than a stated time, however long it takes to give it."""
from __future__ import annotations

import os
import select
import stat
import time
from pathlib import Path
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


def read_by(fd: int, size: int, deadline: float) -> bytes:
    """``os.read`` of at most ``size`` bytes of ``fd`` (b"" at its end); TimeoutError where nothing
    came by ``deadline`` (time.monotonic())."""
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        raise TimeoutError
    return os.read(fd, size)


class NotAFile(ValueError):
    """A FIFO, a device, a folder: refused unread (a FIFO or /dev/zero would never end)."""


class TooLarge(ValueError):
    """A file longer than the cap: read no further than one byte past it."""


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit``: NotAFile or TooLarge, said in
    words that follow the path; OSError where it cannot be opened."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # O_NONBLOCK: a FIFO's open waits for no writer
    with os.fdopen(fd, "rb") as file:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            raise NotAFile(f"not a regular file ({_kind_of(kind)})")
        data = read_at_most(file.read, limit)  # the size fstat gave may have grown since
    if len(data) > limit:
        raise TooLarge(f"larger than {limit >> 20} MiB")
    return data


def _kind_of(mode: int) -> str:
    kinds = {stat.S_ISDIR: "a folder", stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device",
             stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket"}
    return next((name for test, name in kinds.items() if test(mode)), "not a file")
