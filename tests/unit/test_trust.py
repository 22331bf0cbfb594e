"""Run as root, jvmbridge runs no JDK, javac or C loop that another user can change.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_trust.py."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import TENANT

from jvmbridge.trust.paths import changeable_by_others

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")


def test_root_owned_trees_pass_and_each_kind_of_loose_entry_is_named(folder):
    inner = folder / "jdk" / "lib"
    inner.mkdir(parents=True)
    (inner / "libjvm.so").write_bytes(b"")
    assert changeable_by_others(folder / "jdk", whole_tree=True) is None
    assert changeable_by_others(Path("/usr/lib/jvm"), whole_tree=False) is None
    os.chown(inner / "libjvm.so", TENANT, TENANT)
    changeable_by_others.cache_clear()  # root's alone when checked: remembered
    assert changeable_by_others(folder / "jdk", True) == f"{inner}/libjvm.so is owned by uid {TENANT}"
    changeable_by_others.cache_clear()
    os.chown(inner / "libjvm.so", 0, 0)
    os.chown(inner, 0, TENANT)
    inner.chmod(0o775)
    assert changeable_by_others(folder / "jdk", True) == f"{inner} is writable by group gid {TENANT}"
    changeable_by_others.cache_clear()
    inner.chmod(0o757)
    assert changeable_by_others(folder / "jdk", True) == f"{inner} is writable by every user"
    changeable_by_others.cache_clear()
    inner.chmod(0o755)
    # A folder above counts (its owner can swap the tree); /tmp above is sticky, so it does not.
    os.chown(folder, TENANT, TENANT)
    assert changeable_by_others(folder / "jdk", True) == f"{folder} is owned by uid {TENANT}"
    changeable_by_others.cache_clear()
    os.chown(folder, 0, 0)
    # A link inside the tree to a file another user owns.
    (folder / "theirs").write_bytes(b"")
    os.chown(folder / "theirs", TENANT, TENANT)
    (inner / "libextra.so").symlink_to(folder / "theirs")
    assert changeable_by_others(folder / "jdk", True) == f"{folder}/theirs is owned by uid {TENANT}"
    changeable_by_others.cache_clear()
