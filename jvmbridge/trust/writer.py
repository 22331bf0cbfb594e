"""The one way jvmbridge writes a file: as root, into the file named and no other user's hands.

The folder is reached from / one name at a time and held open, so a rename or link meanwhile moves
nothing; links only where no other user can have placed them, the file's own name never. An existing
file must be this user's regular file with no other name (a FIFO, device or others' file is refused).
New files are 0600 unless a caller says. Not root, links are followed as the user made them."""
from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from jvmbridge.trust.bounded import describe_kind
from jvmbridge.trust.paths import NotWritable, open_folder, others_can_change, user_name


def create_private_file(path: Path, mode: int = 0o600) -> int:
    """A new file at ``path`` open for writing: never an existing one (O_EXCL), whatever is planted."""
    folder = open_folder(path.parent)
    try:
        return _named(path, lambda: os.open(path.name, _NEW, mode, dir_fd=folder))
    finally:
        os.close(folder)


_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_for_writing(path: Path, append: bool = False, make_folders: bool = False) -> int:
    """A user-named file open for writing: new (0600) or this user's existing regular file, emptied
    unless ``append``. As root in a folder another user can change, always a new 0600 file renamed
    over the name: they may have renamed a 0644 file of root's onto it."""
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
            # Reopened through the descriptor checked: no name looked up again.
            fd = os.open(f"/proc/self/fd/{held}", os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY
                         | (os.O_APPEND if append else 0))
        finally:
            os.close(held)
        if not append:
            os.ftruncate(fd, 0)
        return fd


def _others_change(folder: int) -> str | None:
    """Why another user can change the held ``folder``, or None."""
    path = f"/proc/self/fd/{folder}"
    return others_can_change(Path(os.readlink(path)), os.fstat(folder), sticky_ok=False, xattrs_at=path)


def _replacing(folder: int, name: str) -> int:
    """A new 0600 file renamed over ``name`` at once, open for writing."""
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
    """``data`` to ``path`` whole: a new file beside it renamed over it, so a reader (node_exporter,
    a JVM loading a jar) sees old or new, never half. The new name does not end as the target's
    (.prom), so a collector skips it meanwhile."""
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
