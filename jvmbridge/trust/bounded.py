"""The one way jvmbridge reads what another party could have written: at most a stated number of
bytes, or by a stated time, however much or slowly the other side gives. Files only where regular,
checked on the open descriptor: a FIFO would block for ever, a device never end."""
from __future__ import annotations

import os
import select
import stat
import time
from pathlib import Path
from typing import Callable

from jvmbridge.trust.paths import open_reached

_CHUNK = 65536


def read_at_most(read: Callable[[int], bytes], limit: int) -> bytes:
    """``read(n)`` until b"", at most ``limit`` + 1 bytes: longer than ``limit`` says there was more."""
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
    """``os.read`` of at most ``size`` bytes; TimeoutError where nothing came by ``deadline``."""
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        raise TimeoutError
    return os.read(fd, size)


class NotAFile(ValueError):
    """A FIFO, a device, a folder: refused unread (it might never end)."""


class TooLarge(ValueError):
    """A file longer than the cap: read no further than one byte past it."""


def read_regular_file(path: Path | str, limit: int, own: bool = False) -> bytes:
    """The regular file at ``path``, at most ``limit`` bytes (NotAFile, TooLarge, OSError). As root,
    reached by trust.paths.open_reached: never through another user's link. ``own``: a file this
    process made, which must be this user's with no other name."""
    held = open_reached(Path(path))
    try:
        # O_NONBLOCK: a FIFO's open waits for no writer; O_NOCTTY: no terminal becomes ours.
        # Reopened through the descriptor: its name is not looked up again.
        fd = os.open(f"/proc/self/fd/{held}", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    finally:
        os.close(held)
    try:
        found = os.fstat(fd)
        if own and (found.st_uid != os.geteuid() or found.st_nlink != 1):
            raise NotAFile("not a file this process made (another owner, or other names)")
        return read_open_file(fd, limit)
    finally:
        os.close(fd)


def read_open_file(fd: int, limit: int) -> bytes:
    """The regular file open at ``fd`` (left open), as :func:`read_regular_file`."""
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        raise NotAFile(f"not a regular file ({describe_kind(kind)})")
    data = read_at_most(lambda size: os.read(fd, size), limit)  # the size fstat gave may have grown since
    if len(data) > limit:
        raise TooLarge(f"larger than {_size(limit)}")
    return data


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"


def describe_kind(mode: int) -> str:
    kinds = {stat.S_ISDIR: "a folder", stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device",
             stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket"}
    return next((name for test, name in kinds.items() if test(mode)), "not a file")
