"""What the parent keeps of a worker process: why it failed (WorkerError), how it ended and what
it printed (ChildOutcome), and what a killed JVM leaves in /tmp (remove_jvm_files).

Why a process each: JPype starts one JVM per process, never restarts it, and a failed start
poisons the process; OpenSSL reads OPENSSL_ia32cap once, at load (the workers: conductor.slices).
"""
from __future__ import annotations

import contextlib
import os
import pwd
import signal
from dataclasses import dataclass
from pathlib import Path

# Why a configuration has no more forks after Ctrl-C; the ones that finished stay its measurement.
INTERRUPTED = "interrupted (Ctrl-C)"


class WorkerError(Exception):
    """A failure the worker understood; its message is meant for the user as it is. ``ended``: where
    the worker's process died, how (its exit status, what it printed), for an engine to read its
    crash report from (engines.jvm.why_failed)."""

    def __init__(self, message: str | None, ended: ChildOutcome | None = None):
        super().__init__(message)
        self.ended = ended


class PartFailed(WorkerError):
    """A failure of one part of a worker (its loop refused the work, or threw): the worker and its
    other parts go on."""


@dataclass
class ChildOutcome:
    result: dict | None  # None when the child died before writing one
    returncode: int
    stdout: str
    stderr: str
    stopped: str = ""  # why the parent stopped a child that gave no sign of progress in time

    @classmethod
    def interrupted(cls) -> ChildOutcome:
        """A fork Ctrl-C cut short: what a part that got no more forks failed with."""
        return cls(result={"error": INTERRUPTED}, returncode=-signal.SIGINT, stdout="", stderr="")

    @property
    def error(self) -> str | None:
        """One line saying why no result came back, or None when one did."""
        if self.stopped:
            return self.stopped
        if self.result is not None and "error" not in self.result:
            return None
        if self.result is not None:
            return self.result["error"]
        last = _last_line(self.stderr) or _last_line(self.stdout)
        return f"worker died ({self.how_it_ended})" + (f": {last}" if last else "")

    @property
    def how_it_ended(self) -> str:
        """"killed by SIGABRT", "exit code 1"."""
        return (f"killed by {signal.Signals(-self.returncode).name}" if self.returncode < 0
                else f"exit code {self.returncode}")


def remove_jvm_files(pid: int) -> None:
    """Remove what a HotSpot JVM in process ``pid`` leaves in /tmp unless it exits of itself: its
    perf data, /tmp/hsperfdata_<user>/<pid> (/tmp whatever TMPDIR says, as HotSpot on Linux does),
    and the attach socket /tmp/.java_pid<pid> an attach made it open. Only in this user's own
    hsperfdata folder, not through a link: a folder of that name is anyone's to make in /tmp."""
    Path(f"/tmp/.java_pid{pid}").unlink(missing_ok=True)
    try:
        folder = os.open(f"/tmp/hsperfdata_{pwd.getpwuid(os.geteuid()).pw_name}",
                         os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except (OSError, KeyError):  # none (no JVM ran, or -XX:-UsePerfData), a link, or a user without a name
        return
    try:
        if os.fstat(folder).st_uid == os.geteuid():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(pid), dir_fd=folder)
    finally:
        os.close(folder)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
