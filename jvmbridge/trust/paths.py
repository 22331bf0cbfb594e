"""What root may execute, load or write into: paths that no other user can change.

As root, a file another user can write (mode or ACL), or a folder above it, hands them root when run,
loaded or written. A path is resolved once, it and every folder above checked, and only the real
path used from then on: repointing a link after the check changes nothing. Trees (a JDK) are checked
whole. Not root, nothing is refused."""
from __future__ import annotations

import errno
import grp
import os
import pwd
import stat
import struct
from pathlib import Path

_MOST_LINKS = 40  # as the kernel's MAXSYMLINKS: more is a loop


class NotTrusted(PermissionError):
    """Root was asked to run or load what another user can change: one line naming it and them."""


def trusted_path(path: str | os.PathLike, what: str, whole_tree: bool = False) -> Path:
    """The real path of ``path``, used from now on; as root, NotTrusted if others can change it or above."""
    real = Path(os.path.realpath(path))
    if os.geteuid() == 0:
        reason = changeable_by_others(real, whole_tree)
        if reason:
            raise NotTrusted(f"{what} {path}: {reason}, so root will not run it")
    return real


def private_folder(path: str | os.PathLike, what: str) -> Path:
    """The real path of a folder of jvmbridge's own files, made 0700 where missing. As root,
    NotTrusted where another user can change it or a folder above (they could plant links where
    root writes). Reached as trust.writer does: their /tmp/jvmbridge link is refused, not followed."""
    if os.geteuid() != 0:
        real = Path(os.path.realpath(path))
        real.mkdir(parents=True, exist_ok=True, mode=0o700)
        return real
    wanted, missing = Path(os.path.abspath(path)), list[str]()
    try:
        while True:  # the deepest folder there is, and the names to make below it
            try:
                held = open_folder(wanted)
                break
            except FileNotFoundError:
                missing.insert(0, wanted.name)
                wanted = wanted.parent
        try:
            real = Path(os.readlink(f"/proc/self/fd/{held}"))
            # Checked afresh each time it is asked for, not remembered.
            reason = _unsafe_to_add_to(real) if missing else _changeable(real, False, [True])
            for name in missing:
                if reason:
                    break
                try:
                    os.mkdir(name, 0o700, dir_fd=held)
                except FileExistsError:  # made meanwhile: checked as it is found below
                    pass
                step = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=held)
                os.close(held)
                held, real = step, real / name
                reason = _changeable(real, False, [True])
        finally:
            os.close(held)
    except NotWritable as e:
        reason = f"{e.filename} is {e.strerror}"
    except OSError as e:  # a file where a folder should be, a name swapped for a link while made
        reason = f"{e.filename or path}: {e.strerror}"
    if reason:
        raise NotTrusted(f"{what} {path}: {reason}, so root will not use it")
    return real


class NotWritable(OSError):
    """A file or folder root will not write (or read through another user's link)."""


_DIRECTORY = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC


def open_folder(folder: Path, make: bool = False) -> int:
    """An O_PATH descriptor of ``folder`` (``make``: missing folders made 0700), reached from / one
    name at a time: as root, a link is followed only where no other user can have placed or
    repointed it. The caller closes it."""
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


def open_reached(path: Path, hops: int = _MOST_LINKS) -> int:
    """An O_PATH descriptor of what is at ``path``, reached as :func:`open_folder`: their link to
    /etc/shadow is not read for them. The caller closes it."""
    if os.geteuid() != 0:
        return os.open(path, os.O_PATH | os.O_CLOEXEC)
    path = Path(os.path.abspath(path))
    if path == path.parent:
        return os.open(path, _DIRECTORY)
    folder = open_folder(path.parent)
    try:
        step = os.open(path.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        found = os.fstat(step)
        if not stat.S_ISLNK(found.st_mode):
            return step
        os.close(step)
        reason = _placed_by_another(folder, path.parent, path, found) or ("a loop of links" if hops <= 0 else None)
        if reason:
            raise NotWritable(errno.EPERM, reason, str(path))
        target = os.readlink(path.name, dir_fd=folder)
    finally:
        os.close(folder)
    return open_reached(path.parent / target, hops - 1)


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


def _unsafe_to_add_to(folder: Path) -> str | None:
    """Why root must not make a folder in ``folder`` (None: only root can change it, or sticky /tmp)."""
    for each in [*reversed(folder.parents), folder]:  # /tmp may be on the way, as it may be the folder
        reason = others_can_change(each, os.lstat(each), sticky_ok=True)
        if reason:
            return reason
    return None


class _Verdicts:
    """:func:`changeable_by_others`, remembering root-only paths; missing names are checked every time."""

    def __init__(self) -> None:
        self._alone: set[tuple[Path, bool]] = set()

    def __call__(self, path: Path, whole_tree: bool = False) -> str | None:
        """Why a non-root user can change what is at real path ``path``, or None. ``whole_tree``: all
        under it too, links followed only where none can repoint them, to targets none can change. A
        missing name is fine only where no other user can create it."""
        if (path, whole_tree) in self._alone:
            return None
        complete = [True]
        reason = _changeable(path, whole_tree, complete)
        if reason is None and complete[0]:
            self._alone.add((path, whole_tree))
        return reason

    def cache_clear(self) -> None:
        self._alone.clear()


changeable_by_others = _Verdicts()


def _changeable(path: Path, whole_tree: bool, complete: list[bool]) -> str | None:
    """As :func:`changeable_by_others`; ``complete[0]`` set False where a name was missing."""
    held = Path("/")
    for folder in reversed(path.parents):
        try:
            found = others_can_change(folder, os.lstat(folder), sticky_ok=True)
        except FileNotFoundError:  # what does not exist yet, root will make: where none but root can
            complete[0] = False
            return _creatable(folder, held)
        if found:
            return found
        held = folder
    try:
        found = others_can_change(path, os.lstat(path), sticky_ok=False)
    except FileNotFoundError:
        complete[0] = False
        return _creatable(path, held)
    if found or not whole_tree:
        return found
    return _tree(path, set(), complete)


def _creatable(missing: Path, holder: Path) -> str | None:
    """Why another user could create ``missing`` in ``holder``, or None."""
    reason = others_can_change(holder, os.lstat(holder), sticky_ok=False)
    return f"{missing} does not exist and another user can create it ({reason})" if reason else None


def _tree(top: Path, seen: set[tuple[int, int]], complete: list[bool]) -> str | None:
    """Why another user can change anything under folder ``top``, or None. Walked by descriptors (a
    name swapped for a link is never entered); ``seen`` (device, inode) ends loops."""
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except NotADirectoryError:  # a file: nothing under it
        return None
    except FileNotFoundError:
        return None
    except OSError:
        return f"{top} became a link while it was checked"
    try:
        found = os.fstat(fd)
        if (found.st_dev, found.st_ino) in seen:
            return None
        seen.add((found.st_dev, found.st_ino))
        with os.scandir(fd) as entries:
            listed = list(entries)
        for entry in listed:
            path = top / entry.name
            try:
                status = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(status.st_mode):
                    reason = _linked(path, seen, complete)
                else:
                    reason = others_can_change(path, status, sticky_ok=False)
                    if not reason and stat.S_ISDIR(status.st_mode):
                        reason = _tree(path, seen, complete)
            except FileNotFoundError:  # gone while walked
                continue
            if reason:
                return reason
        return None
    finally:
        os.close(fd)


def _linked(link: Path, seen: set[tuple[int, int]], complete: list[bool]) -> str | None:
    """A link inside a tree (a JDK's conf/ into /etc), followed one component at a time: what it leads
    to must be root's, a folder checked whole. A dangling one is fine only where no other user can
    create its target (one into /tmp is theirs to fill once root has looked)."""
    target, reason = _followed(link)
    if reason or target is None:
        complete[0] = complete[0] and target is not None
        return reason
    found = others_can_change(target, os.lstat(target), sticky_ok=False)
    return found or _tree(target, seen, complete)



def _followed(path: Path) -> tuple[Path | None, str | None]:
    """Where ``path`` leads, resolved from / one name at a time, and why another user could change
    that (a folder on the way, their link in a shared folder); the place is None where it leads
    nowhere."""
    pending, where, hops = list(path.parts[1:]), Path("/"), _MOST_LINKS
    above = os.lstat(where)
    while pending:
        name = pending.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            where = where.parent
            above = os.lstat(where)
            continue
        here = where / name
        try:
            found = os.lstat(here)
        except FileNotFoundError:
            return None, _creatable(here, where)
        except NotADirectoryError:  # a file on the way: only its folder's writers could change that
            return None, None
        if stat.S_ISLNK(found.st_mode):
            if found.st_uid != 0 and above.st_mode & stat.S_ISVTX:  # /tmp: they may add links, and own them
                return None, f"{here} is a link owned by {user_name(found.st_uid)}"
            hops -= 1
            if hops < 0:
                return None, None
            target = os.readlink(here)
            pending[:0] = target.split("/")
            if target.startswith("/"):
                where, above = Path("/"), os.lstat("/")
            continue
        if pending:
            reason = others_can_change(here, found, sticky_ok=True)
            if reason:
                return None, reason
            where, above = here, found
        else:
            where = here
    return where, None


def others_can_change(path: Path, found: os.stat_result, sticky_ok: bool, xattrs_at: str | None = None) -> str | None:
    """Why a user other than root can change ``path`` (mode or ACL read at ``xattrs_at``, else
    ``path``), or None. ``sticky_ok``: a sticky folder (/tmp) counts as root's."""
    if stat.S_ISLNK(found.st_mode):  # a real path holds no link, unless someone swapped one in just now
        return f"{path} became a link while it was checked"
    if found.st_uid != 0:
        return f"{path} is owned by {user_name(found.st_uid)}"
    if found.st_mode & stat.S_IWGRP and found.st_gid != 0:
        return f"{path} is writable by group {_group(found.st_gid)}"
    # Others may add to a sticky folder but not replace root's entries.
    if found.st_mode & stat.S_IWOTH and not (sticky_ok and stat.S_ISDIR(found.st_mode) and found.st_mode & stat.S_ISVTX):
        return f"{path} is writable by every user"
    return _acl_writer(path, stat.S_ISDIR(found.st_mode), xattrs_at)


# POSIX ACLs in xattrs (acl_ea.h): named users and groups can write past the mode bits.
_ACL_ATTRIBUTES = ("system.posix_acl_access", "system.posix_acl_default")
_ACL_HEADER, _ACL_ENTRY = struct.Struct("<I"), struct.Struct("<HHI")
_ACL_USER, _ACL_GROUP, _ACL_MASK = 0x02, 0x08, 0x10
_ACL_WRITE = 0x02


def _acl_writer(path: Path, is_folder: bool, xattrs_at: str | None) -> str | None:
    """Who other than root may write ``path`` through an ACL entry (a folder's default ACL too), or None."""
    for attribute in _ACL_ATTRIBUTES[:2 if is_folder else 1]:
        try:
            # A held descriptor's /proc path is a link to follow; a name never (it may be a link).
            raw = os.getxattr(xattrs_at or path, attribute, follow_symlinks=xattrs_at is not None)
        except OSError:  # no ACL, or a file system without them
            continue
        entries = [_ACL_ENTRY.unpack_from(raw, offset) for offset in range(_ACL_HEADER.size, len(raw), _ACL_ENTRY.size)]
        mask = next((permissions for tag, permissions, _ in entries if tag == _ACL_MASK), 0o7)
        for tag, permissions, who in entries:
            if tag in (_ACL_USER, _ACL_GROUP) and who != 0 and permissions & mask & _ACL_WRITE:
                writer = user_name(who) if tag == _ACL_USER else f"group {_group(who)}"
                kind = "an ACL entry" if attribute.endswith("access") else "a default ACL entry"
                return f"{path} is writable by {writer} ({kind})"
    return None


def user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"
