"""The one way jvmbridge writes a file: run files, --output, --export-*, report's figure, the host
speed reference, the cache's jar and library, thread dumps, the fleet's documents.

Run as root, a write must land in the file named and nowhere else, and hand no other user what it
holds. So the folder is reached from / one name at a time and held open (openat), and nothing
renamed or linked meanwhile moves the write elsewhere; a link on the way is followed only where no
other user can have placed or repointed it (a folder only root can change; in /tmp, a link of
root's); the file's own name is never followed as a link. An existing file is written only where
it is a regular file of this user with no other name (a hard link), checked on a descriptor before
it is opened for writing, let alone truncated: a FIFO, a device, a socket or another user's file is
refused unwritten, in one line. New files are 0600, the owner's alone, unless a caller says (a
collector's file). Not run as root, links are followed as the user made them; the rest holds.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from jvmbridge.trust.bounded import describe_kind
from jvmbridge.trust.paths import others_can_change, user_name


class NotWritable(OSError):
    """A file or folder root will not write: ``strerror`` says why, ``filename`` names it."""


_MOST_LINKS = 40  # as the kernel's MAXSYMLINKS: more is a loop
_DIRECTORY = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC


def open_folder(folder: Path, make: bool = False) -> int:
    """An O_PATH descriptor of ``folder`` (``make``: its missing folders made 0700), reached as the
    module says. The caller closes it."""
    if os.geteuid() != 0:
        if make:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return os.open(folder, _DIRECTORY)
    pending, where, hops = os.path.abspath(folder).split("/"), Path("/"), _MOST_LINKS
    fd = os.open("/", _DIRECTORY)
    try:
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                fd, where = _step(fd, os.open("..", _DIRECTORY, dir_fd=fd)), where.parent
                continue
            try:
                step = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not make:
                    raise
                os.mkdir(name, 0o700, dir_fd=fd)
                pending.insert(0, name)  # opened, and checked, on the next turn
                continue
            found = os.fstat(step)
            if stat.S_ISLNK(found.st_mode):
                os.close(step)
                hops -= 1
                reason = _placed_by_another(fd, where, where / name, found) or ("a loop of links" if hops < 0 else None)
                if reason:
                    raise NotWritable(errno.EPERM, reason, str(where / name))
                target = os.readlink(name, dir_fd=fd)
                pending[:0] = target.split("/")
                if target.startswith("/"):
                    fd, where = _step(fd, os.open("/", _DIRECTORY)), Path("/")
                continue
            if not stat.S_ISDIR(found.st_mode):
                os.close(step)
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(where / name))
            fd, where = _step(fd, step), where / name
        return fd
    except BaseException:
        os.close(fd)
        raise


def _step(old: int, new: int) -> int:
    os.close(old)
    return new


def _placed_by_another(folder_fd: int, folder: Path, link: Path, found: os.stat_result) -> str | None:
    """Why another user may have placed or repointed ``link`` in ``folder``, or None."""
    held = os.fstat(folder_fd)
    reason = others_can_change(folder, held, sticky_ok=True, xattrs_at=f"/proc/self/fd/{folder_fd}")
    if reason:
        return f"a link in a folder another user can change ({reason})"
    if held.st_mode & stat.S_ISVTX and found.st_uid != 0:
        return f"a link owned by {user_name(found.st_uid)}"
    return None


def create_private_file(path: Path, mode: int = 0o600) -> int:
    """A new file at ``path``, as a descriptor open for writing: never an existing one (O_EXCL),
    whatever someone planted there."""
    folder = open_folder(path.parent)
    try:
        return _named(path, lambda: os.open(path.name, _NEW, mode, dir_fd=folder))
    finally:
        os.close(folder)


_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_for_writing(path: Path, append: bool = False, make_folders: bool = False) -> int:
    """A file the user named (--output, --export-*, --plot), as a descriptor open for writing: new
    (0600), or an existing regular file of this user's, emptied unless ``append``."""
    folder = open_folder(path.parent, make=make_folders)
    try:
        return _named(path, lambda: _open_existing_or_new(folder, path.name, append))
    finally:
        os.close(folder)


def _open_existing_or_new(folder: int, name: str, append: bool) -> int:
    while True:
        try:
            return os.open(name, _NEW, 0o600, dir_fd=folder)
        except FileExistsError:
            pass
        try:
            held = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        except FileNotFoundError:  # removed in between: make it
            continue
        try:
            _writable(os.fstat(held))
            # Reopened through the descriptor checked: the same file, with no name looked up again.
            fd = os.open(f"/proc/self/fd/{held}", os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY
                         | (os.O_APPEND if append else 0))
        finally:
            os.close(held)
        if not append:
            os.ftruncate(fd, 0)
        return fd


def _writable(found: os.stat_result) -> None:
    """NotWritable where root must not write over what is there."""
    if stat.S_ISLNK(found.st_mode):
        raise NotWritable(errno.ELOOP, os.strerror(errno.ELOOP))
    if not stat.S_ISREG(found.st_mode):
        raise NotWritable(errno.EPERM, f"{describe_kind(found.st_mode)}, not a regular file: not written")
    if os.geteuid() == 0 and found.st_uid != 0:
        raise NotWritable(errno.EPERM, f"owned by {user_name(found.st_uid)}: root writes over none but its own "
                                       "files (remove it first)")
    if os.geteuid() == 0 and found.st_nlink > 1:
        raise NotWritable(errno.EPERM, "a file with other names (hard links): root will not write through them")


def _named(path: Path, opening) -> int:
    """``opening()``, its error naming the whole path, not the name within the folder."""
    try:
        return opening()
    except OSError as e:
        e.filename = str(path)
        raise


def replace_whole(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """``data`` written to ``path`` whole: into a new file beside it (``mode``), then renamed over
    it, so a reader that may come at any moment (node_exporter's textfile collector, a JVM loading
    a jar) sees the old file or the new one, never half of one, and a crash leaves the old. The new
    file's name does not end as the target's (.prom), so a collector skips it while it is written."""
    folder = open_folder(path.parent)
    partial = f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial"
    try:
        written = _named(path, lambda: os.open(partial, _NEW, mode, dir_fd=folder))
        try:
            with open(written, "wb") as out:
                out.write(data.encode() if isinstance(data, str) else data)
                out.flush()
                os.fsync(out.fileno())  # on disk before the name points at it
            _named(path, lambda: os.rename(partial, path.name, src_dir_fd=folder, dst_dir_fd=folder))
        except BaseException:
            os.unlink(partial, dir_fd=folder)
            raise
    finally:
        os.close(folder)
