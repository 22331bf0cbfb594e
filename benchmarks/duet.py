"""Duet benchmarking (Bulej et al., ICPE 2020) against the conductor's slices: would a ratio's
forks agree more closely if its two sides ran at the same moment, one on each vCPU, than in slices
one after another on the measuring vCPU, as compare runs them?

Each fork starts every configuration of compare's default JVM and C loop (38-byte AES-256-CBC
messages) twice, its loop pinned to vCPU 0 in one worker and to vCPU 1 in the other, and warms
each up. Then, cycle after cycle, in a fresh random order: each configuration's 50 ms slice alone,
in each of its workers (the other vCPU idle); each ratio's two sides at once, one on each vCPU,
sides swapped every cycle (the duet); each configuration on both vCPUs at once (the A/A check: the
ratio is 1 by construction, so its spread is the duet's own noise and its distance from 1 the
vCPUs' bias). The ways, per side and fork: "alone", vCPU 1's worker's 20 slices (compare's way);
"alone x2", the worker of the cycle's vCPU (10 slices of each: two JVMs, as the duet draws on);
"duet", 20 slices, 10 in each worker.

Per ratio and way, over the forks: the forks' spread (what the interval over forks is made of), the
interval, and the ratio itself (a duet whose sides share execution units, hyper-threads of one
core, would bias it: the paper warns of AES-NI on against off). A fork's ratio is compare's
(pairing.fork_ratio: each side's lower quartile of its undisturbed slices); for the duet also the
geometric mean of its pairs' ratios, the paper's. "sides r": how much of the slices' noise the two
sides share, timed together (duet) or in the same cycle (alone): what pairing can cancel.

    python benchmarks/duet.py [FORKS]   (default 8; --quick: one fork of four 10 ms cycles)
"""
from __future__ import annotations

import math
import os
import random
import statistics
import threading
from concurrent.futures import ThreadPoolExecutor

import _common

from jvmbridge.comparison.interleaved import InterleavedJob, conducting
from jvmbridge.comparison.runner import plan
from jvmbridge.conductor.pairing import fork_ratio, over_forks, running_ns_per_op
from jvmbridge.conductor.slices import WorkerProcess
from jvmbridge.engines import Matrix
from jvmbridge.jvm.discovery import find_javas
from jvmbridge.sampling.policy import CYCLES, SLICE_SECONDS, Sampling
from jvmbridge.sampling.workload import Operation, Workload
from jvmbridge.stats.summary import disturbed

CPUS = (0, 1)
WAYS = ("alone", "alone x2", "duet", "duet pairs")


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("forks", nargs="?", type=int, default=8)
    args = parser.parse_args()
    _common.begin(args)
    if not set(CPUS) <= os.sched_getaffinity(0):
        _common.skip(args, "vCPUs 0 and 1")
    forks, slice_seconds, cycles = (1, 0.01, 4) if args.quick else (args.forks, SLICE_SECONDS, CYCLES)
    (job,) = [j for j in plan([Workload(Operation(), Sampling())], Matrix(find_javas((), False), engines=("jvm", "c-loop")))
              if isinstance(j, InterleavedJob)]
    given = conducting(job)
    where = {c.label: (int(c.worker), c.part) for c in given.configurations if c.counted}
    per_fork: dict[tuple[str, str], list[float]] = {}  # (way, ratio or configuration) -> each fork's
    for number in range(forks):
        slices = _fork(job, where, given.asked, slice_seconds, cycles, random.Random(number))
        for key, value in _fork_figures(slices, given.asked, where).items():
            per_fork.setdefault(key, []).append(value)
    print(f"{forks} forks of {cycles} cycles, {slice_seconds * 1000:g} ms slices; slices disturbed: "
          + ", ".join(f"{way} {statistics.fmean(per_fork['disturbed', way]):.1%}" for way in ("alone", "duet", "a/a")))
    print(f"{'way':>11} {'ratio':>7} {'forks sd':>9} {'interval':>9} {'sides r':>8}  of")
    figures = []
    for label in [ratio.label for ratio in given.asked] + list(where):
        for way in (WAYS if label not in where else ("a/a",)):
            ratios = [r for r in per_fork[way, label] if math.isfinite(r)]
            if not ratios:
                continue
            spread = statistics.stdev(math.log(r) for r in ratios) if len(ratios) > 1 else math.nan
            interval = over_forks(ratios) if len(ratios) > 1 else None
            value = interval.value if interval else ratios[0]
            error = interval.relative_error if interval else math.inf
            shared = statistics.fmean(per_fork.get(("r", way, label), [math.nan]))
            figures.append({"way": way, "of": label, "ratio": value, "fork_log_sd": spread, "relative_error": error,
                            "sides_r": shared, "forks": len(ratios)})
            print(f"{way:>11} {value:>6.3f}x {spread:>9.2%} {error:>9.2%} {shared:>8.2f}  {label}")
    _common.save(args, {"forks": forks, "cycles": cycles, "slice_seconds": slice_seconds, "rows": figures,
                        "disturbed": {way: statistics.fmean(per_fork["disturbed", way]) for way in ("alone", "duet", "a/a")}})


def _fork_figures(slices: dict, asked, where: dict) -> dict:
    """One fork's ratio by (way, ratio label), its A/A ratio by ("a/a", configuration); ("r", way,
    label): Pearson's r of the two sides' undisturbed slices timed together (the duet's) or in the
    same cycle (alone), on their logs: how much of the slices' noise the two sides share;
    ("disturbed", way): the share of its slices that were."""
    found: dict = {}
    for ratio in asked:
        for way in ("alone", "alone x2", "duet"):
            found[way, ratio.label] = fork_ratio(slices[way, ratio.slower], slices[way, ratio.faster]) or math.nan
        for way, pairs in (("alone", zip(slices["alone", ratio.slower], slices["alone", ratio.faster])),
                           ("duet", slices["pairs", ratio.label])):
            logs = [(math.log(_ns(a)), math.log(_ns(b))) for a, b in pairs if not disturbed(a) and not disturbed(b)]
            if way == "duet":
                found["duet pairs", ratio.label] = math.exp(statistics.fmean(a - b for a, b in logs)) if logs else math.nan
            found["r", way, ratio.label] = _pearson(logs)
    for label in where:
        found["a/a", label] = fork_ratio(slices["a/a 0", label], slices["a/a 1", label]) or math.nan
    for way, kinds in (("alone", ("alone", "alone 0")), ("duet", ("duet",)), ("a/a", ("a/a 0", "a/a 1"))):
        timed = [s for (kind, _), each in slices.items() if kind in kinds for s in each]
        found["disturbed", way] = sum(map(disturbed, timed)) / len(timed)
    return found


def _pearson(pairs: list[tuple[float, float]]) -> float:
    if len(pairs) < 3:
        return math.nan
    try:
        return statistics.correlation(*zip(*pairs))
    except statistics.StatisticsError:  # a side without spread
        return math.nan


def _fork(job: InterleavedJob, where: dict, asked, slice_seconds: float, cycles: int,
          rng: random.Random) -> dict[tuple[str, str], list]:
    """One fork: every configuration's worker on each vCPU, warmed up, then the cycles. Its slices by
    (way, configuration), and the duet's pairs by ratio ("pairs", label): [(slower's, faster's)]."""
    settings = [setting for _, setting in job.settings]
    workers = {(index, cpu): WorkerProcess(setting.module, {**setting.request, "measuring_cpu": cpu}, setting.env)
               for index, setting in enumerate(settings) for cpu in CPUS}
    found: dict[tuple[str, str], list] = {}
    try:
        for worker in workers.values():
            worker.ready()
        counts = {}
        for label, (index, part) in where.items():
            for cpu in CPUS:
                setting = settings[index]
                warmed = workers[index, cpu].warm(part, setting.warmup_min_seconds, setting.warmup_max_seconds)
                counts[label, cpu] = max(1, round(slice_seconds * 1e9 / warmed["ns_per_op"]))
        with ThreadPoolExecutor(max_workers=2) as two:
            for cycle in range(cycles):
                tasks = ([("alone", label) for label in where] + [("duet", ratio) for ratio in asked]
                         + [("a/a", label) for label in where])
                rng.shuffle(tasks)
                for kind, what in tasks:
                    if kind == "alone":
                        at_0, at_1 = (_slice(workers, where, counts, what, cpu, slice_seconds) for cpu in CPUS)
                        found.setdefault(("alone 0", what), []).append(at_0)
                        found.setdefault(("alone", what), []).append(at_1)
                        found.setdefault(("alone x2", what), []).append((at_0, at_1)[cycle % 2])
                    elif kind == "a/a":
                        at_0, at_1 = _at_once(two, workers, where, counts, (what, 0), (what, 1), slice_seconds)
                        found.setdefault(("a/a 0", what), []).append(at_0)
                        found.setdefault(("a/a 1", what), []).append(at_1)
                    else:
                        slower_cpu = cycle % 2  # the sides swap vCPUs every cycle
                        slower, faster = _at_once(two, workers, where, counts, (what.slower, slower_cpu),
                                                  (what.faster, 1 - slower_cpu), slice_seconds)
                        found.setdefault(("duet", what.slower), []).append(slower)
                        found.setdefault(("duet", what.faster), []).append(faster)
                        found.setdefault(("pairs", what.label), []).append((slower, faster))
    finally:
        for worker in workers.values():
            worker.stop()
    return found


def _slice(workers, where, counts, label: str, cpu: int, slice_seconds: float) -> dict:
    index, part = where[label]
    return workers[index, cpu].slice(part, counts[label, cpu], slice_seconds)


def _at_once(two: ThreadPoolExecutor, workers, where, counts, first: tuple[str, int], second: tuple[str, int],
             slice_seconds: float) -> tuple[dict, dict]:
    """Two slices started together (a barrier), each on its own vCPU; both as timed."""
    barrier = threading.Barrier(2)

    def timed(label: str, cpu: int) -> dict:
        barrier.wait()
        return _slice(workers, where, counts, label, cpu, slice_seconds)

    a, b = two.submit(timed, *first), two.submit(timed, *second)
    return a.result(), b.result()


def _ns(timed: dict) -> float:
    return running_ns_per_op(timed["ns"], timed["iterations"], timed.get("wait_ns", 0))


if __name__ == "__main__":
    main()
