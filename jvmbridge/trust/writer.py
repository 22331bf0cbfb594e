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
from jvmbridge.trust.paths import NotWritable, open_folder, others_can_change, user_name


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
    (0600), or an existing regular file of this user's, emptied unless ``append``. Run as root in a
    folder another user can change, never the file there: its owner may have renamed a file of root's
    (a 0644 export) onto the name, so a new 0600 file replaces it, and nothing is appended to."""
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
            if os.geteuid() == 0 and (reason := _others_change(folder)):
                if append:
                    raise NotWritable(errno.EPERM, f"in a folder another user can change ({reason}), root adds to "
                                                   "no file already there: name a new one")
                return _replacing(folder, name)
            # Reopened through the descriptor checked: the same file, with no name looked up again.
            fd = os.open(f"/proc/self/fd/{held}", os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY
                         | (os.O_APPEND if append else 0))
        finally:
            os.close(held)
        if not append:
            os.ftruncate(fd, 0)
        return fd


def _others_change(folder: int) -> str | None:
    """Why another user can change the folder held at ``folder`` (add, rename, sticky or not), or None."""
    path = f"/proc/self/fd/{folder}"
    return others_can_change(Path(os.readlink(path)), os.fstat(folder), sticky_ok=False, xattrs_at=path)


def _replacing(folder: int, name: str) -> int:
    """A new 0600 file, renamed over ``name`` in ``folder`` at once: open for writing."""
    partial = f".{name}.{os.getpid()}.{secrets.token_hex(4)}.partial"
    fd = os.open(partial, _NEW, 0o600, dir_fd=folder)
    try:
        os.rename(partial, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        os.close(fd)
        os.unlink(partial, dir_fd=folder)
        raise
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
            os.fchmod(written, mode)  # the mode asked, whatever the umask (a collector's 0644 under umask 077)
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
