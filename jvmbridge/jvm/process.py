"""A process followed from the moment it is found, so that nothing meant for it reaches another.

Between finding a JVM and attaching (10-30 s a silent JVM) its pid may go to another process, which
root would then send a trigger file and SIGQUIT. A pidfd reaches that process or none; /proc/PID
reads count only if it still lives after, with the start time and uid found at first."""
from __future__ import annotations

import os
import signal
import weakref
from pathlib import Path


class ProcessChanged(RuntimeError):
    """The process found has ended, or its pid now names another: one line saying which."""


class TrackedProcess:
    """The process that has ``pid`` now, with its start time and effective uid."""

    def __init__(self, pid: int):
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)  # ProcessLookupError when there is none
        self._closer = weakref.finalize(self, os.close, self.pidfd)
        try:
            self.start_time, self.uid = _identity(pid)
            self._check_alive()
        except BaseException:
            self.close()
            raise

    def ensure_same(self) -> None:
        """ProcessChanged unless /proc/PID still shows the process found with its uid: before each
        privileged step and after opening anything through /proc/PID."""
        try:
            now = _identity(self.pid)
        except (FileNotFoundError, ProcessLookupError):
            now = None
        self._check_alive()  # after the read: alive now means what was read was its
        if now != (self.start_time, self.uid):
            raise ProcessChanged(f"pid {self.pid} changed since it was found (start time {self.start_time} -> "
                                 f"{now[0]}, uid {self.uid} -> {now[1]}): given up" if now else
                                 f"pid {self.pid} ended since it was found: given up")

    def ended(self) -> bool:
        """Whether the process found has ended (its pid free, or another process's now)."""
        try:
            self._check_alive()
        except ProcessChanged:
            return True
        return False

    def send_signal(self, number: int) -> None:
        """``number`` to the process found, never to one that took its pid."""
        self.ensure_same()
        signal.pidfd_send_signal(self.pidfd, number)

    def close(self) -> None:
        self._closer()

    def _check_alive(self) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, 0)
        except ProcessLookupError:
            raise ProcessChanged(f"pid {self.pid} ended since it was found: given up") from None
        except PermissionError:  # another user's process: there, which is all this asks
            pass


def _identity(pid: int) -> tuple[int, int]:
    """Start time (clock ticks after boot, field 22 of /proc/PID/stat) and effective uid."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    # The command name may hold spaces and parentheses: fields follow the last ")".
    start_time = int(stat.rpartition(b")")[2].split()[19])
    uid = next(int(line.split()[2]) for line in Path(f"/proc/{pid}/status").read_bytes().splitlines()
               if line.startswith(b"Uid:"))
    return start_time, uid
