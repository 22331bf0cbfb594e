"""The worker's side of the conductor (conductor.slices) that needs no engine: whether its threads,
put at idle priority while aside, may come back."""
from __future__ import annotations

import os
import resource

import pytest

from jvmbridge.conductor.slices import may_leave_idle

NOBODY = 65534


def _idle_and_back(as_nobody: bool) -> tuple[bool, bool]:
    """In a child process (as nobody, if asked): what may_leave_idle says, and whether a thread set
    SCHED_IDLE could then return to SCHED_OTHER."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only os calls, then _exit, whatever happens
        try:
            if as_nobody:  # root's capabilities go with its uid
                os.setgroups([])
                os.setresgid(NOBODY, NOBODY, NOBODY)
                os.setresuid(NOBODY, NOBODY, NOBODY)
            said = may_leave_idle()
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            try:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
                left = True
            except PermissionError:
                left = False
            os.write(write, f"{said} {left}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        said, left = answer.read().split()
    os.waitpid(pid, 0)
    return said == "True", left == "True"


def test_may_leave_idle_says_what_the_kernel_allows_this_user():
    said, left = _idle_and_back(as_nobody=False)
    assert said == left


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to become another user")
def test_an_unprivileged_user_is_told_whether_it_may_leave_idle():
    assert _idle_and_back(as_nobody=False) == (True, True)  # root: CAP_SYS_NICE
    said, left = _idle_and_back(as_nobody=True)
    assert said == left
    if resource.getrlimit(resource.RLIMIT_NICE)[0] == 0:  # the usual limit: the case the check is for
        assert not left
