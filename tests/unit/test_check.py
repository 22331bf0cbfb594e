"""`jvmbridge check`: verdicts from the real CPU, real JVM flags and real JIT logs; live JVMs.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_check.py."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("program, owner, euid, perf_data, says", [
    ("/sbin/init", 0, 0, False, "not a JVM (/sbin/init)"),
    ("/usr/bin/java", 1000, 1001, False, "a JVM this user may not inspect (owned by uid 1000)"),
    ("/opt/app/launcher", 1000, 1001, True, "a JVM this user may not inspect"),  # its perf data tells
    ("java", 0, 0, True, "a JVM the kernel hides even from root"),
])
def test_an_unreadable_process_is_told_apart_by_what_can_be_seen(program, owner, euid, perf_data, says):
    from jvmbridge.jvm.live import unreadable

    assert unreadable(7, program, owner, euid, perf_data).startswith(f"pid 7: {says}")


def test_one_users_many_jvms_take_turns_with_every_other_users():
    """A scan has one budget; read in pid order, one user's many slow JVMs spent it before the others'."""
    from pathlib import Path
    from types import SimpleNamespace

    from jvmbridge.check.host import _turns_of_owners
    from jvmbridge.jvm.discovery import JavaInstall
    from jvmbridge.jvm.live import LiveJvm, UncheckableJvm

    def jvm(uid: int) -> LiveJvm:
        return LiveJvm(process=SimpleNamespace(uid=uid), java=JavaInstall(home=Path("/j"), libjvm=Path("/j/l"), release_version="17"),
                       command_line="java")

    asked = [42, jvm(5101), jvm(5101), jvm(5101), jvm(5102), UncheckableJvm(7, "unreadable"), jvm(5103)]
    assert _turns_of_owners(asked) == [0, 1, 4, 5, 6, 2, 3]
