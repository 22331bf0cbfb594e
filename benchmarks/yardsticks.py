"""Which yardstick feels what the rows feel? A default compare's configurations run in the
conductor's forks as compare runs them, with candidate yardsticks in the same cycles (a quarter
slice each, as compare's): compare's own two, the AES-NI C loop in cache and the same loop with
AES-NI masked (OpenSSL's table-based AES, what the JVM falls back to), the same two on 38-byte
messages (an init, update and final each, as the message rows), and two more: a copy of 1 MiB blocks
through 64 MiB (memory bandwidth), and a pointer chase through a random cycle of 64 MiB (a cache and
TLB miss a step). Per fork, each configuration's figure is its reading as the conductor takes a
yardstick's (conductor.pairing.fork_reading: the lower quartile of its undisturbed slices) and its
slowdown that figure over its median over the run's forks.

Printed per yardstick: the correlation of its slowdowns with the rows' (their geometric mean, fork
by fork), and of the forks the rows call slowed (every row more than SLOWED slower: an episode by
the rows' own account), how many stats.episodes sets aside from that yardstick's readings alone,
and how many calm forks it sets aside. The choice of yardsticks is made from these figures.

A host's bad moments are rare on a quiet machine; --hog ON,OFF makes some: a hog on every vCPU but
the measuring one for ON seconds of every ON+OFF: the copy loop below (memory bandwidth), or with
--hog-kind alloc a Python loop copying 256 MiB into a fresh object each time (page faults, the
kernel zeroing and freeing memory: the hog beside which default compares had every row slowed);
--hog-anywhere lets it run on any vCPU, the measuring one too, as another program of the host would.

    python benchmarks/yardsticks.py [FORKS] [--hog ON,OFF] [--hog-kind copy|alloc] [--hog-anywhere]
        (default 30 forks, a copy hog; --quick: 2 forks of the C loop)
"""
from __future__ import annotations

import ctypes
import math
import os
import statistics
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import _common

from jvmbridge.comparison.interleaved import (
    TABLE_YARDSTICK_NAME,
    YARDSTICK_NAME,
    InterleavedJob,
    conducting,
    measuring_cpu,
    worker_spec,
)
from jvmbridge.comparison.runner import plan
from jvmbridge.conductor.conduct import Configuration, Pace, WorkerSpec, conduct
from jvmbridge.conductor.pairing import fork_reading
from jvmbridge.engines import ENGINES, Matrix
from jvmbridge.forks.measure import on_cpus, timed_rounds, warm_up
from jvmbridge.forks.parent import ChildOutcome
from jvmbridge.jvm.discovery import find_javas
from jvmbridge.native.c_loop import CLoopUnavailable
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import Operation, Workload
from jvmbridge.stats.episodes import episodes
from jvmbridge.trust.launch import find_program, launch, run

# A fork whose every row ran this much slower than its median over the run is slowed (an episode).
SLOWED = 0.05
MESSAGE_YARDSTICK = Workload(Operation(key_bits=128, mode="cbc", message_bytes=38, shape="message"), Sampling())
MESSAGE_NAME = "yardstick: C loop, AES-128-CBC, 38-byte messages, AES-NI as the CPU offers"
MESSAGE_TABLE_NAME = "yardstick: C loop, AES-128-CBC, 38-byte messages, AES-NI masked (table-based AES)"
MEMORY_NAME = "yardstick: copy 1 MiB blocks through 64 MiB (memory bandwidth)"
CHASE_NAME = "yardstick: pointer chase through a random cycle of 64 MiB (a cache miss a step)"
MEMORY_BYTES = 64 << 20

# The memory loops: nothing of jvmbridge's own runs them, so they are built here, as the C loop is
# (native.c_loop), with the system's compiler. Each call returns its elapsed nanoseconds.
MEMORY_LOOPS = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define BLOCK (1 << 20)
static size_t *next_, slots_, at_;
static unsigned char *from_, *to_;
static size_t bytes_, offset_;
static int64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
int setup(size_t bytes) {
    uint64_t seed = 88172645463325252ULL;
    bytes_ = bytes; slots_ = bytes / sizeof(size_t);
    next_ = malloc(bytes); from_ = malloc(bytes); to_ = malloc(bytes);
    if (!next_ || !from_ || !to_) return -1;
    memset(from_, 1, bytes); memset(to_, 2, bytes);
    for (size_t i = 0; i < slots_; i++) next_[i] = i;
    for (size_t i = slots_ - 1; i > 0; i--) {  /* Sattolo: one cycle through every slot */
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        size_t j = seed % i, kept = next_[i]; next_[i] = next_[j]; next_[j] = kept;
    }
    return 0;
}
int64_t chase(int64_t steps) {
    int64_t started = now(); size_t i = at_;
    for (int64_t n = 0; n < steps; n++) i = next_[i];
    at_ = i;
    return now() - started;
}
int64_t copy_blocks(int64_t blocks) {
    int64_t started = now();
    for (int64_t n = 0; n < blocks; n++) {
        memcpy(to_ + offset_, from_ + offset_, BLOCK);
        offset_ = (offset_ + BLOCK) % bytes_;
    }
    return now() - started;
}
"""


def memory_loops(folder: Path) -> ctypes.CDLL:
    """The memory loops, compiled into ``folder`` and set up; CLoopUnavailable without a compiler."""
    compiler = find_program(os.environ.get("CC") or "cc", "the C compiler")
    if compiler is None:
        raise CLoopUnavailable("no C compiler for the memory loops")
    source, library = folder / "memory_loops.c", folder / "memory_loops.so"
    source.write_text(MEMORY_LOOPS)
    built = run([str(compiler), "-O2", "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True, text=True)
    if built.returncode:
        raise CLoopUnavailable(f"the memory loops did not build: {built.stderr.strip()[-200:]}")
    loops = ctypes.CDLL(str(library))
    loops.setup.argtypes, loops.chase.argtypes, loops.copy_blocks.argtypes = [ctypes.c_size_t], [ctypes.c_int64], [ctypes.c_int64]
    loops.chase.restype = loops.copy_blocks.restype = ctypes.c_int64
    if loops.setup(MEMORY_BYTES):
        raise CLoopUnavailable("no memory for the memory loops")
    return loops


class InProcess:
    """A yardstick loop of this process as the conductor's worker: run on the measuring vCPU for its
    slices, and off it while the conductor warms it up beside another fork (aside)."""

    def __init__(self, loop: Callable[[int], int], cpu: int | None):
        self.loop, self.cpu, self.away = loop, cpu, False

    def _where(self) -> set[int] | None:
        if self.cpu is None:
            return None
        return (os.sched_getaffinity(0) - {self.cpu}) or None if self.away else {self.cpu}

    def ready(self) -> dict:
        return {}

    def aside(self) -> None:
        self.away = True

    def warm(self, part: int, min_seconds: float, max_seconds: float) -> dict:
        with on_cpus(self._where()):
            return warm_up(self.loop, min_seconds, max_seconds).as_dict()

    def slice(self, part: int, iterations: int, expected_seconds: float) -> dict:
        self.away = False
        with on_cpus(self._where()):
            (timed,) = timed_rounds(self.loop, [iterations])
        return timed

    def finish(self) -> list[dict]:
        return [{}]

    def ended(self) -> ChildOutcome:
        return ChildOutcome(result=None, returncode=0, stdout="", stderr="")  # no process: it cannot fail apart

    def printed(self) -> str:
        return ""

    def stop(self) -> None:
        pass


def hogging(library: Path, cpus: set[int], on_seconds: float, off_seconds: float, kind: str) -> Callable[[], None]:
    """A hog of ``kind`` (copy, alloc: see the module's doc) on ``cpus`` for ``on_seconds`` of every
    ``on_seconds + off_seconds``, until the function returned is called."""
    loop = (f"loops = ctypes.CDLL({str(library)!r})\nloops.setup({MEMORY_BYTES})\nwhile True: loops.copy_blocks(64)"
            if kind == "copy" else "held = bytearray(256 << 20)\nwhile True: copied = bytes(held)")
    code = f"import ctypes, os\nos.sched_setaffinity(0, {sorted(cpus)})\n{loop}"
    done = threading.Event()

    def alternate() -> None:
        while not done.wait(off_seconds):
            hog = launch([sys.executable, "-c", code])
            done.wait(on_seconds)
            hog.kill()
            hog.wait()

    thread = threading.Thread(target=alternate)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join()
    return stop


def in_process_spec(loop: Callable[[int], int], cpu: int | None) -> WorkerSpec:
    return WorkerSpec(start=lambda: InProcess(loop, cpu), warmup_min_seconds=0.1, warmup_max_seconds=0.5)


def slowdowns(figures: list[float | None]) -> list[float | None]:
    """Each fork's figure over the median of the run's, less 1."""
    found = [f for f in figures if f is not None]
    middle = statistics.median(found) if found else math.nan
    return [f / middle - 1 if f is not None else None for f in figures]


def correlation(xs: list[float | None], ys: list[float | None]) -> float:
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pairs) < 3 or len({x for x, _ in pairs}) < 2 or len({y for _, y in pairs}) < 2:
        return math.nan
    return statistics.correlation([x for x, _ in pairs], [y for _, y in pairs])


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("forks", nargs="?", type=int, default=30)
    parser.add_argument("--hog", metavar="ON,OFF", help="a memory hog on the other vCPUs ON s of every ON+OFF s")
    parser.add_argument("--hog-kind", choices=("copy", "alloc"), default="copy", help="the hog's loop (default copy)")
    parser.add_argument("--hog-anywhere", action="store_true", help="the hog on any vCPU, not only the others")
    args = parser.parse_args()
    _common.begin(args)
    _common.own_data_home()
    forks = 2 if args.quick else args.forks
    matrix = Matrix(engines=("c-loop",)) if args.quick else Matrix(tuple(find_javas((), False)))
    c_loop = ENGINES["c-loop"]
    if c_loop.unavailable(matrix):
        _common.skip(args, "the C loop (a C compiler and OpenSSL's headers)")
    jobs = [j for j in plan([Workload(Operation(), Sampling())], matrix) if isinstance(j, InterleavedJob)]
    given = conducting(InterleavedJob.merged(jobs))
    cpu = measuring_cpu()
    rows = [c.label for c in given.configurations if c.counted]
    with tempfile.TemporaryDirectory(prefix="jvmbridge-yardsticks-") as scratch:
        try:
            loops = memory_loops(Path(scratch))
        except CLoopUnavailable as e:
            _common.skip(args, str(e))
        messages = dict(zip((MESSAGE_NAME, MESSAGE_TABLE_NAME), c_loop.sliced([(MESSAGE_YARDSTICK, "")], matrix)))
        workers = {**given.workers, **{name: worker_spec(stick, cpu) for name, stick in messages.items()},
                   MEMORY_NAME: in_process_spec(loops.copy_blocks, cpu), CHASE_NAME: in_process_spec(loops.chase, cpu)}
        configurations = [*given.configurations, *(Configuration(label=name, worker=name, part=0, counted=False)
                                                   for name in (*messages, MEMORY_NAME, CHASE_NAME))]
        stop_hog = None
        if args.hog and cpu is not None:
            on_seconds, off_seconds = (float(part) for part in args.hog.split(","))
            cpus = os.sched_getaffinity(0) - (set() if args.hog_anywhere else {cpu})
            stop_hog = hogging(Path(scratch) / "memory_loops.so", cpus, on_seconds, off_seconds, args.hog_kind)
        try:
            conducted = conduct(workers, configurations, given.asked, Pace(min_forks=forks, max_forks=forks))
        finally:
            if stop_hog is not None:
                stop_hog()
    yardsticks = [YARDSTICK_NAME, TABLE_YARDSTICK_NAME, MESSAGE_NAME, MESSAGE_TABLE_NAME, MEMORY_NAME, CHASE_NAME]
    figures = {label: [fork_reading(f.slices[label]) if label in f.slices else None for f in conducted.forks]
               for label in rows + yardsticks}
    _common.save(args, {"forks": len(conducted.forks), "figures": figures})  # kept should the analysis fail
    slowed = {label: slowdowns(own) for label, own in figures.items()}
    # The rows' slowdown in each fork: the geometric mean of theirs; slowed where every row slowed.
    row_logs = [[math.log1p(s) for s in fork if s is not None] for fork in zip(*(slowed[r] for r in rows))]
    rows_slowed = [math.expm1(statistics.fmean(logs)) if logs else None for logs in row_logs]
    episode_forks = {i for i, fork in enumerate(zip(*(slowed[r] for r in rows)))
                     if all(s is not None and s > SLOWED for s in fork)}
    results = []
    print(f"{len(conducted.forks)} forks, {len(rows)} rows; {len(episode_forks)} forks with every row over "
          f"{SLOWED:.0%} slower (rows' slowdowns there: "
          f"{', '.join(f'{rows_slowed[i]:+.0%}' for i in sorted(episode_forks)) or 'none'})")
    print(f"{'r':>6} {'seen':>7} {'false':>6} {'spread':>7}  yardstick")
    for name in yardsticks:
        set_aside = set(episodes({name: figures[name]}).set_aside)
        calm_figures = [f for i, f in enumerate(figures[name]) if i not in episode_forks and f is not None]
        spread = statistics.stdev(calm_figures) / statistics.fmean(calm_figures) if len(calm_figures) > 1 else math.nan
        found = {"yardstick": name, "correlation": correlation(slowed[name], rows_slowed),
                 "episode_forks": len(episode_forks), "seen": len(set_aside & episode_forks),
                 "calm_set_aside": len(set_aside - episode_forks), "calm_spread": spread,
                 "fork_slowdowns": slowed[name]}
        results.append(found)
        print(f"{found['correlation']:>6.2f} {found['seen']:>3} of {len(episode_forks):<2} {found['calm_set_aside']:>6} "
              f"{spread:>7.2%}  {name}")
    _common.save(args, {"forks": len(conducted.forks), "figures": figures, "rows": rows, "rows_slowed": rows_slowed,
                        "row_slowdowns": {r: slowed[r] for r in rows}, "yardsticks": results})


if __name__ == "__main__":
    main()
