"""The one way jvmbridge reads what another party could have written (a JDK's release file, saved
runs, hosts' documents, the host speed reference, a child's result, /proc's files of other
processes, a JVM's attach reply, a child's replies): at most a stated number of bytes, however much
the other side has to give, or no longer than a stated time, however long it takes to give it. A
file is read only where it is a regular file, checked on the open descriptor: a FIFO would block
for ever, a device never end."""
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


def read_regular_file(path: Path | str, limit: int, own: bool = False) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit``: NotAFile or TooLarge, said in
    words that follow the path; OSError where it cannot be opened. Run as root, reached as
    trust.paths.open_reached reaches it: never through a link another user placed. ``own``: a file
    this process had made (a compiler's output), so NotAFile unless it is this user's, with no other name."""
    held = open_reached(Path(path))
    try:
        # O_NONBLOCK: a FIFO's open waits for no writer; O_NOCTTY: a terminal does not become ours.
        # Reopened through the descriptor reached: the same file, its name not looked up again.
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
    """The bytes of the regular file open at ``fd`` (left open), at most ``limit``, as
    :func:`read_regular_file`: for a file found by a walk of its own (jvm.procroot)."""
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
