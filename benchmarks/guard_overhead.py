"""What the guard costs the application: the harness's AesWorkload (CBC and CTR, 38 bytes to 4 KiB)
in two JVMs side by side, one with -javaagent:jvmbridge-guard.jar=delay=D and one without, each
pinned to a CPU of its own (swapped from pair to pair) with the guard's threads on the guarded
JVM's CPU: the worst case, a server with no core to spare. Each prints its rounds per second.

Forks of one JVM settle at speeds of their own (levels, several % apart here), which pairs of JVMs
cannot resolve to 1%. So each JVM is its own control: its rate after its warm-up and before the
guard starts (seconds 10 to D), against its rate once the guard has its answers (read from its
property over the attach socket, as `check --pid` reads it) until the end. The plain JVM's same
ratio over the same seconds, side by side, takes out what the machine did meanwhile:

    cost after the window = (guarded after / guarded before) / (plain after / plain before)

with the mean and a 95% interval over pairs. Beside it, directly: what the guard's own threads
(jvmbridge-guard*) and the flight recorder's (JFR *, which its stream of compilation events keeps
running) used after the window, as a share of the guarded JVM's CPU (/proc/PID/task/*/stat), and the
same ratio for the window itself. Issue 28's target: within 1% after the window.

    python benchmarks/guard_overhead.py [--java PATH] [--pairs 5] [--delay 30] [--seconds 100] [--modes cbc+ctr+gcm]
"""
from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
from argparse import Namespace
from pathlib import Path

import _common

from jvmbridge.guard.state import PROPERTY, parse
from jvmbridge.harness import guard_jar, harness_jar
from jvmbridge.jvm.live import live_property
from jvmbridge.stats.summary import half_width

GUARDS_THREADS = ("jvmbridge-guard", "JFR ")  # comm is cut at 15 characters: both guard threads read "jvmbridge-guard"
# Quick mode, whatever else is given: one pair of 13 s runs, the guard proving CBC alone after 1 s on
# a whole core (it answered about 6.5 s into a run on this busy 2-vCPU machine, before the 10 s due).
# Quick: seconds enough that a JVM slow to start under load still prints rates after the guard answers.
QUICK = {"pairs": 1, "delay": 1, "seconds": 20, "modes": "cbc", "share": 1.0, "warm_up": 0, "after_at_least": 6}


def cpu_ticks(pid: int) -> tuple[int, int]:
    """(the guard's and the flight recorder's threads, every thread): user + system clock ticks."""
    guards = total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # a thread that ended
            continue
        name, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        total += ticks
        guards += ticks if name.startswith(GUARDS_THREADS) else 0
    return guards, total


class Workload:
    """One pinned JVM running AesWorkload, its rates read as it prints them."""

    def __init__(self, java: str, cpu: int, seconds: float, agent: str | None):
        command = ["taskset", "-c", str(cpu), java, *([f"-javaagent:{guard_jar()}={agent}"] if agent else []),
                   "-cp", str(harness_jar()), "jvmbridge.harness.AesWorkload", str(seconds), "rate"]
        self.started = time.monotonic()
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self.rates: list[int] = []
        self._reader = threading.Thread(target=self._read)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout
        for line in self.process.stdout:
            if line.startswith("rate "):
                self.rates.append(int(line.split()[1]))

    def finish(self) -> list[int]:
        self._reader.join()
        if self.process.wait() != 0:
            raise SystemExit(f"the workload failed (exit {self.process.returncode})")
        return self.rates


def settled_at(workload: Workload, deadline: float) -> tuple[float, str]:
    """Seconds into the run when the guard had an answer for every mode, and what it said."""
    while time.monotonic() < deadline:
        time.sleep(1)
        try:
            said = live_property(workload.process.pid, PROPERTY) or ""
        except Exception:  # not attachable yet
            continue
        if said and all(state.settled for state in parse(said)):
            return time.monotonic() - workload.started, said
    raise SystemExit(f"the guard had no answer within {deadline - workload.started:.0f} s")


class Pair:
    def __init__(self, java: str, number: int, args: Namespace):
        cpus = sorted(os.sched_getaffinity(0))
        first, second = (cpus[0], cpus[-1]) if number % 2 == 0 else (cpus[-1], cpus[0])
        share = f",share={args.share}" if args.share else ""
        guarded = Workload(java, first, args.seconds, f"modes={args.modes},delay={args.delay}{share}")
        plain = Workload(java, second, args.seconds, None)
        self.settled, said = settled_at(guarded, guarded.started + args.seconds - args.after_at_least)
        if not all(state.status == "verified" for state in parse(said)):
            raise SystemExit(f"the guard did not verify every mode: {said}")
        start = int(self.settled) + 2
        at_window = cpu_ticks(guarded.process.pid)
        time.sleep(max(0.0, guarded.started + args.seconds - 1 - time.monotonic()))
        at_end = cpu_ticks(guarded.process.pid)
        self.guard_share = (at_end[0] - at_window[0]) / max(1, at_end[1] - at_window[1])
        g, p = guarded.finish(), plain.finish()
        before = slice(args.warm_up, args.delay)
        window = slice(args.delay, int(self.settled))
        after = slice(start, len(g) - 1)
        if not g[after] or not p[after]:
            raise SystemExit(f"the guard answered {self.settled:.0f} s in: no second of the run was left after it "
                             "(a longer --seconds or a shorter --after-at-least)")
        self.window_cost = _ratio(g, p, before, window)
        self.after_cost = _ratio(g, p, before, after)
        self.g_before, self.g_after = statistics.median(g[before]), statistics.median(g[after])
        self.p_before, self.p_after = statistics.median(p[before]), statistics.median(p[after])


def _ratio(guarded: list[int], plain: list[int], before: slice, then: slice) -> float:
    """(guarded then / guarded before) / (plain then / plain before), medians of seconds."""
    def change(rates: list[int]) -> float:
        return statistics.median(rates[then]) / statistics.median(rates[before])
    return change(guarded) / change(plain)


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("--java", default="java")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--delay", type=int, default=30, help="the guard's delay: seconds before it starts")
    parser.add_argument("--seconds", type=int, default=100, help="each JVM's run")
    parser.add_argument("--modes", default="cbc+ctr+gcm", help="the modes the guard proves")
    parser.add_argument("--share", type=float, help="the share of a core the guard uses at most (default: its own, 0.5)")
    parser.add_argument("--warm-up", type=int, default=10, help="seconds of each JVM's run left out before its "
                                                                "\"before\" figure")
    parser.add_argument("--after-at-least", type=int, default=15,
                        help="seconds each run keeps after the guard's answers, at least, for the \"after\" figure")
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    _common.begin(args)
    pairs = []
    print(f"{'pair':>4} {'with: before':>13} {'after':>9} {'without: before':>16} {'after':>9} {'answers at':>11} "
          f"{'in window':>10} {'after':>7} {'guard CPU after':>16}")
    for number in range(args.pairs):
        pair = Pair(args.java, number, args)
        pairs.append(pair)
        print(f"{number + 1:>4} {pair.g_before:>13,.0f} {pair.g_after:>9,.0f} {pair.p_before:>16,.0f} "
              f"{pair.p_after:>9,.0f} {pair.settled:>10.0f}s {pair.window_cost:>10.3f} {pair.after_cost:>7.3f} "
              f"{pair.guard_share:>15.3%}", flush=True)
    figures: dict = {"pairs": [dict(vars(pair)) for pair in pairs]}
    for name, costs in (("in the window", [p.window_cost for p in pairs]), ("after it", [p.after_cost for p in pairs])):
        mean = statistics.fmean(costs)
        error = half_width(statistics.stdev(costs), len(costs)) if len(costs) > 1 else float("inf")
        print(f"guarded/plain, each against its own rate before the guard started, {name}: {mean:.3f} ±{error:.3f} "
              f"(95%, {len(costs)} pairs)")
        figures[f"cost {name}"] = {"mean": mean, "half_width_95": error}
    shares = [p.guard_share for p in pairs]
    print(f"the guard's and the flight recorder's threads after the window: {statistics.fmean(shares):.3%} of the "
          f"guarded JVM's CPU (highest {max(shares):.3%}; clock ticks of {os.sysconf('SC_CLK_TCK')} Hz)")
    figures["guard_cpu_share_after"] = {"mean": statistics.fmean(shares), "highest": max(shares)}
    _common.save(args, figures)


if __name__ == "__main__":
    main()
