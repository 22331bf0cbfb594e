"""What the parent keeps of a worker: why it failed, how it ended, and the JVM files it left.

A process each: JPype starts one JVM per process, never again, and a failed start poisons it;
OpenSSL reads OPENSSL_ia32cap once, at load.
"""
from __future__ import annotations

import contextlib
import os
import pwd
import signal
from dataclasses import dataclass
from pathlib import Path

# Finished forks stay the configuration's measurement.
INTERRUPTED = "interrupted (Ctrl-C)"


class WorkerError(Exception):
    """A failure the worker understood, its message for the user; ``ended``: how the process died."""

    def __init__(self, message: str | None, ended: ChildOutcome | None = None):
        super().__init__(message)
        self.ended = ended


class PartFailed(WorkerError):
    """A failure of one part (its loop refused or threw): the worker and its other parts go on."""


@dataclass
class ChildOutcome:
    result: dict | None  # None when the child died before writing one
    returncode: int
    stdout: str
    stderr: str
    stopped: str = ""  # why the parent stopped a child that gave no sign of progress in time

    @classmethod
    def interrupted(cls) -> ChildOutcome:
        """A fork Ctrl-C cut short."""
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
    """Remove what a killed HotSpot JVM leaves in /tmp: hsperfdata_<user>/<pid> and .java_pid<pid>.
    Only in this user's own hsperfdata folder, not through a link: anyone can make that name in /tmp."""
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
