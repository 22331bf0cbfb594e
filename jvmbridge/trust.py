"""What root may execute or load: files that no other user can change.

Run as root, jvmbridge starts JVMs (their launcher, libjvm.so and every library a JDK loads),
runs javac and loads its own C loop from its cache. If a user other than root can write any of
those files, the folder holding them, or a folder above it (which lets them swap it), running it
as root hands them root. Not run as root, nothing is refused: a user can only hurt themself.
"""
from __future__ import annotations

import functools
import grp
import os
import pwd
import stat
from pathlib import Path


class NotTrusted(PermissionError):
    """Root was asked to run or load what another user can change: one line naming it and them."""


def refuse_as_root(path: Path, what: str, whole_tree: bool = False) -> None:
    """NotTrusted when running as root and a non-root user can change ``path`` (a file or
    folder, the folders above it, and with ``whole_tree`` everything below it)."""
    if os.geteuid() != 0:
        return
    reason = changeable_by_others(Path(os.path.realpath(path)), whole_tree)
    if reason:
        raise NotTrusted(f"{what} {path}: {reason}, so root will not run it")


@functools.lru_cache(maxsize=None)
def changeable_by_others(path: Path, whole_tree: bool = False) -> str | None:
    """Why a non-root user can change what is at the real path ``path``, or None if none can."""
    for folder in reversed(path.parents):
        if not folder.exists():  # what does not exist yet, root will make
            return None
        found = _loose(folder, os.stat(folder), sticky_ok=True)
        if found:
            return found
    if not path.exists():
        return None
    found = _loose(path, os.stat(path), sticky_ok=False)
    if found or not whole_tree or not path.is_dir():
        return found
    for top, folders, files in os.walk(path):
        for name in [*folders, *files]:
            entry = Path(top) / name
            try:
                found = _linked(entry) if entry.is_symlink() else _loose(entry, os.lstat(entry), sticky_ok=False)
            except FileNotFoundError:  # a dangling link (Debian's JDKs link src.zip to a package not installed)
                continue
            if found:
                return found
    return None


def _linked(link: Path) -> str | None:
    """A link inside a tree: what it points to, and the folders above that, must be root's."""
    target = Path(os.path.realpath(link))
    os.stat(target)  # FileNotFoundError when it dangles
    return changeable_by_others(target)


def _loose(path: Path, found: os.stat_result, sticky_ok: bool) -> str | None:
    if found.st_uid != 0:
        return f"{path} is owned by {_user(found.st_uid)}"
    if found.st_mode & stat.S_IWGRP and found.st_gid != 0:
        return f"{path} is writable by group {_group(found.st_gid)}"
    # Others may add to a sticky folder (/tmp) but not replace root's entries in it.
    if found.st_mode & stat.S_IWOTH and not (sticky_ok and stat.S_ISDIR(found.st_mode) and found.st_mode & stat.S_ISVTX):
        return f"{path} is writable by every user"
    return None


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"
