"""Paths inside another process's root, never out of it: through /proc/PID/root the kernel resolves an
absolute link against *our* root (a container's /tmp linked to /root would open the host's /root).
Each component is opened with O_NOFOLLOW, links walked again from its root; ``..`` stops there."""
from __future__ import annotations

import os
import stat
from pathlib import Path


class OutsideRoot(OSError):
    """A path that cannot be followed inside the root (a loop of links, a missing component)."""


def open_inside(root: Path, path: str, hops: int = 40) -> tuple[int, str]:
    """An O_PATH descriptor of ``path`` in ``root`` and its resolved path there; the caller closes it."""
    root_fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    try:
        return _walk(root_fd, [p for p in path.split("/") if p], hops)
    finally:
        os.close(root_fd)


def open_file_inside(root: Path, path: str, within: str = "/") -> int | None:
    """A readable descriptor of the regular file at ``path`` in ``root``, or None where none, not
    regular (a FIFO would block) or led out of ``within`` by links. The caller closes it."""
    try:
        found, inside = open_inside(root, path)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(found).st_mode) or not inside.startswith(within.rstrip("/") + "/"):
            return None
        # Reopened through our descriptor: no path looked up again.
        return os.open(f"/proc/self/fd/{found}", os.O_RDONLY | os.O_NOCTTY)
    finally:
        os.close(found)


def _walk(root_fd: int, pending: list[str], hops: int) -> tuple[int, str]:
    names: list[str] = []  # real directories from the root to where the walk stands
    fd = os.dup(root_fd)
    try:
        while pending:
            part = pending.pop(0)
            if part in (".", ".."):
                if part == ".." and names:
                    names.pop()
                    os.close(fd)
                    fd = _reopen(root_fd, names)
                continue
            try:
                step = os.open(part, os.O_PATH | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                raise OutsideRoot(e.errno, f"/{'/'.join([*names, part])}: {e.strerror}") from None
            if stat.S_ISLNK(os.fstat(step).st_mode):
                target = os.readlink(part, dir_fd=fd)
                os.close(step)
                hops -= 1
                if hops < 0:
                    raise OutsideRoot(40, f"/{'/'.join([*names, part])}: too many symbolic links")
                pending[:0] = [p for p in target.split("/") if p]
                if target.startswith("/"):
                    names = []
                    os.close(fd)
                    fd = os.dup(root_fd)
                continue
            os.close(fd)
            fd = step
            names.append(part)
        return fd, "/" + "/".join(names)
    except BaseException:
        os.close(fd)
        raise


def _reopen(root_fd: int, names: list[str]) -> int:
    """The directory at ``names`` (real directories, no links) from the root again."""
    fd = os.dup(root_fd)
    for name in names:
        step = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = step
    return fd
