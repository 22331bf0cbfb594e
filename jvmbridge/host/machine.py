"""What else ran on the machine while jvmbridge measured: other processes, and the host.

Work on the *other* vCPUs delays no counter of the loop but slows it through shared caches and
memory (hogs on both moved a C loop 0.7-1.1%: tests/integration/test_round_telemetry.py). So a run
says how many vCPUs others kept busy: /proc/stat less this process tree, and the host's steal.
"""
from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass

TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")
# /proc/stat's "cpu" line, in ticks.
_BUSY_FIELDS = (0, 1, 2, 5, 6)  # user, nice, system, irq, softirq (guest time is inside user)
_STEAL_FIELD = 7
# Other work averaging this share of a vCPU during a row's job gets a note.
NOTICEABLE_CPUS = 0.1


def cpu_ticks() -> list[int] | None:
    """The machine's CPU time by kind, over all CPUs; None where unreadable."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return [int(value) for value in fields[1:]] if fields[:1] == ["cpu"] else None
    except (OSError, ValueError):
        return None


def steal_ticks(ticks: list[int] | None) -> int:
    return ticks[_STEAL_FIELD] if ticks and len(ticks) > _STEAL_FIELD else 0


def _own_cpu_ns() -> int:
    """CPU time of this process and its reaped children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return round((own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime) * 1e9)


@dataclass(frozen=True)
class Load:
    seconds: float  # the wall time it covers
    other_cpus: float  # vCPUs other processes kept busy on average (busy time here less jvmbridge's own)
    steal_cpus: float  # vCPUs the host took on average (steal)
    cpus: int

    def as_dict(self) -> dict:
        return {"seconds": self.seconds, "other_cpus": self.other_cpus, "steal_cpus": self.steal_cpus,
                "cpus": self.cpus}


class LoadWatch:
    """Started with a run; ``since()`` gives the Load from then (None if unreadable). Children still
    running then count as others: call it once they have ended."""

    def __init__(self) -> None:
        self._wall, self._ticks, self._own = time.perf_counter_ns(), cpu_ticks(), _own_cpu_ns()

    def since(self) -> Load | None:
        ticks = cpu_ticks()
        if ticks is None or self._ticks is None:
            return None
        wall = max(time.perf_counter_ns() - self._wall, 1)
        busy = sum(ticks[i] - self._ticks[i] for i in _BUSY_FIELDS) * TICK_NS
        others = max(0.0, busy - (_own_cpu_ns() - self._own))
        return Load(seconds=wall / 1e9, other_cpus=others / wall,
                    steal_cpus=(steal_ticks(ticks) - steal_ticks(self._ticks)) * TICK_NS / wall,
                    cpus=os.cpu_count() or 1)


def load_text(load: dict) -> str:
    """A run's load as its header says it, from Load.as_dict."""
    return (f"other processes kept {load['other_cpus']:.2f} of the {load['cpus']} vCPUs busy on average; "
            f"steal {load['steal_cpus']:.2f}")


def shared_text(load: Load) -> str | None:
    """A row's note on the processes beside its job; None where too few to matter."""
    if load.other_cpus < NOTICEABLE_CPUS:
        return None
    return f"other processes kept {load.other_cpus:.2f} of the {load.cpus} vCPUs busy on average while it ran"
