"""Warm-up and timed rounds for every engine whose loop runs N operations: ``run(n)`` times itself
inside the engine, so call overhead stays out; a loop that cannot run exactly n returns Counted.
"""
from __future__ import annotations

import multiprocessing
import os
import resource
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Callable, Iterator, NamedTuple

from jvmbridge.host.machine import TICK_NS, cpu_ticks, steal_ticks


class Counted(NamedTuple):
    """What a self-counting loop did (`openssl speed`): operations, ns, and its own process's readings."""
    operations: int
    ns: int
    counters: dict[str, int]


RunLoop = Callable[[int], "int | Counted"]
# Moves while the engine still changes what it runs: the JIT's compiles (interpreted or C1 code can
# look steady while C2 still works), a JVM heap's first pass (fresh_memory).
Activity = Callable[[], int]
# A process taking a minor page fault more often than this still touches memory for the first time:
# at about a microsecond a fault, 1% of its time (docs/decisions/0012-warm-ups-through-fresh-memory-and-ten-cycles.md).
FAULT_SPACING_NS = 100_000

# Keeps the per-chunk timer and call cost negligible.
CHUNK_SECONDS = 0.05
# Steady when the last STEADY_WINDOW chunks agree within STEADY_TOLERANCE (relative range).
STEADY_WINDOW = 5
STEADY_TOLERANCE = 0.05
# One dead copy would otherwise hang the barrier forever.
BARRIER_SECONDS = 60


@dataclass
class Warmup:
    iterations: int
    seconds: float
    steady: bool  # False: the time limit ran out before the chunks agreed
    ns_per_op: float  # the fastest of the last chunks, used to size rounds to a duration
    chunks: list[float]  # ns/op of each chunk of full length, in order: what jvmbridge.stats.steady reads

    def as_dict(self) -> dict:
        return asdict(self)


def warm_up(run: RunLoop, min_seconds: float, max_seconds: float, activity: Activity | None = None,
            tolerance: float = STEADY_TOLERANCE, in_this_thread: bool = False) -> Warmup:
    """Run chunks until their speed settles and ``activity`` stays still, or ``max_seconds`` pass.
    ``in_this_thread``: the loop runs on this thread, whose CPU time per operation then judges the
    speed settled; it leaves out the waits other work on the host causes, which no warm-up outlasts
    (docs/decisions/0011-warm-ups-judged-by-cpu-time.md)."""
    # One operation first: a single message may take long (64 MiB).
    chunk, total = 1, 0
    recent: list[float] = []
    paces: list[float] = []
    marks: list[float] = []
    full: list[float] = []
    started = time.perf_counter()
    while True:
        done, elapsed_ns, pace = _chunk(run, chunk, in_this_thread)
        total += done
        recent = (recent + [elapsed_ns / done])[-STEADY_WINDOW:]
        paces = (paces + [pace])[-STEADY_WINDOW:]
        if elapsed_ns >= CHUNK_SECONDS * 1e9 / 2:  # shorter ones are the timer's and the first calls' noise
            full.append(elapsed_ns / done)
        marks = (marks + [activity() if activity else 0])[-STEADY_WINDOW:]
        spent = time.perf_counter() - started
        steady = _agree(paces, tolerance) and marks[0] == marks[-1]
        if (steady and spent >= min_seconds) or spent >= max_seconds:
            # The fastest recent chunk sizes the slices: the last may have waited (steadiness no longer says).
            return Warmup(iterations=total, seconds=spent, steady=steady, ns_per_op=min(recent), chunks=full)
        if elapsed_ns < CHUNK_SECONDS * 1e9:
            # At most tenfold a step: early chunks run interpreted code and mislead the estimate.
            chunk = max(chunk, min(done * 10, int(done * CHUNK_SECONDS * 1e9 / elapsed_ns)))


def fresh_memory() -> Activity:
    """Moves at each reading (one a warm-up chunk) after which this process took minor page faults more
    often than one per FAULT_SPACING_NS: a JVM allocating into a heap its collections have not yet
    passed over, slow until they have. Every thread's faults: with --threads the loops run on others."""
    last, moved = (_minor_faults(), time.perf_counter_ns()), 0

    def activity() -> int:
        nonlocal last, moved
        now = (_minor_faults(), time.perf_counter_ns())
        moved += (now[0] - last[0]) * FAULT_SPACING_NS > now[1] - last[1]
        last = now
        return moved

    return activity


def _minor_faults() -> int:
    """This process's minor page faults so far, its every thread's."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _chunk(run: RunLoop, asked: int, in_this_thread: bool) -> tuple[int, int, float]:
    """(operations, wall ns, ns per operation the steadiness judges) of one warm-up chunk."""
    cpu_ns = time.thread_time_ns()
    result = run(asked)
    cpu_ns = time.thread_time_ns() - cpu_ns
    done, elapsed_ns = _done(asked, result)
    elapsed_ns = max(elapsed_ns, 1)
    on_cpu = in_this_thread and not isinstance(result, Counted)  # a self-counting loop runs elsewhere
    return done, elapsed_ns, (max(cpu_ns, 1) if on_cpu else elapsed_ns) / done


def _agree(paces: list[float], tolerance: float) -> bool:
    """Whether a full window of chunks agree within ``tolerance`` (relative range)."""
    return len(paces) == STEADY_WINDOW and (max(paces) - min(paces)) / min(paces) <= tolerance


def _done(asked: int, result: "int | Counted") -> tuple[int, int]:
    """(operations, nanoseconds) of a run asked for ``asked`` operations."""
    return (result.operations, result.ns) if isinstance(result, Counted) else (asked, result)


def split_iterations(iterations: int, rounds: int) -> list[int]:
    """``iterations`` shared among ``rounds`` rounds differing by at most one; no empty round."""
    rounds = min(rounds, iterations)
    base, extra = divmod(iterations, rounds)
    return [base + (1 if i < extra else 0) for i in range(rounds)]


def timed_rounds(run: RunLoop, counts: list[int], copies: int = 1,
                 counters: dict[str, Activity] | None = None) -> list[dict]:
    """One timed round per count; ``copies`` loops ran each count at once. ``counters`` (GC, JIT ms)
    are read around each round, plus steal and, with one copy, the thread's CPU time and run-queue
    wait: they tell a round slowed by other work from a slow loop."""

    # Outermost first before, last after: the thread's CPU time innermost spans the loop alone (a JVM's
    # beans once took 0.7 ms, putting a 62 ms round's CPU time 1.1% over its wall time).
    order = {**(counters or {}), "steal_ns": steal_ns,
             **({"wait_ns": run_queue_wait_ns, "cpu_ns": time.thread_time_ns} if copies == 1 else {})}
    def timed(n: int) -> dict:
        before = {name: read() for name, read in order.items()}
        result = run(n)
        after = {name: read() for name, read in reversed(order.items())}
        done, ns = _done(n, result)
        own = result.counters if isinstance(result, Counted) else {}
        return {"iterations": done * copies, "ns": ns, **{name: after[name] - before[name] for name in order}, **own}

    return [timed(n) for n in counts]


def schedstat(path: str = "/proc/thread-self/schedstat") -> tuple[int, int]:
    """(run, waited for a CPU) nanoseconds from schedstat, this thread's by default; (0, 0) if absent."""
    try:
        with open(path) as f:
            ran, waited = f.read().split()[:2]
        return int(ran), int(waited)
    except (OSError, ValueError):
        return 0, 0


def run_queue_wait_ns() -> int:
    """Nanoseconds this thread has spent runnable but waiting for a CPU."""
    return schedstat()[1]


def steal_ns() -> int:
    """Nanoseconds the hypervisor ran others while this guest wanted its vCPUs, per vCPU; 0 if unreported."""
    return int(steal_ticks(cpu_ticks()) * TICK_NS / (os.cpu_count() or 1))


@contextmanager
def on_cpus(cpus: set[int] | None) -> Iterator[None]:
    """The calling thread (and processes started meanwhile) on ``cpus``, then back."""
    own = os.sched_getaffinity(0)
    if cpus:
        os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        if cpus:
            os.sched_setaffinity(0, own)


@contextmanager
def in_processes(run: RunLoop, copies: int) -> Iterator[RunLoop]:
    """``run`` in ``copies`` forked processes at once, as `openssl speed -multi`, started at a barrier,
    returning wall ns until the last finished. For engines without threads (the GIL); never after a
    JVM started, which must not fork. One copy: ``run`` itself."""
    if copies == 1:
        yield run
        return
    context = multiprocessing.get_context("fork")
    start = context.Barrier(copies + 1)
    links = [context.Pipe() for _ in range(copies)]

    def copy_loop(link) -> None:
        # Closing the caller's ends: if the caller dies silently, this copy reads EOF and ends too.
        for parent, _ in links:
            parent.close()
        try:
            while (n := link.recv()) is not None:
                start.wait(timeout=BARRIER_SECONDS)
                try:
                    run(n)
                    link.send(None)
                except Exception as e:  # the parent raises it; a dead copy would hang the barrier
                    link.send(f"{type(e).__name__}: {e}")
        except (EOFError, OSError, threading.BrokenBarrierError):
            return

    copies_running = [context.Process(target=copy_loop, args=(child,), daemon=True) for _, child in links]
    for process in copies_running:
        process.start()

    def run_all(n: int) -> int:
        for parent, _ in links:
            parent.send(n)
        start.wait(timeout=BARRIER_SECONDS)
        began = time.perf_counter_ns()
        errors = [error for error in (parent.recv() for parent, _ in links) if error]
        elapsed = time.perf_counter_ns() - began
        if errors:
            raise RuntimeError(errors[0])
        return elapsed

    try:
        yield run_all
    finally:
        for parent, _ in links:
            parent.send(None)
        for process in copies_running:
            process.join(timeout=10)


def merge_warmups(warmups: list[dict]) -> dict:
    """One account of several forks' warm-ups: totals, steady only if every fork got there."""
    return {"iterations": sum(w["iterations"] for w in warmups), "seconds": sum(w["seconds"] for w in warmups),
            "steady": all(w["steady"] for w in warmups), "ns_per_op": warmups[-1]["ns_per_op"],
            "forks": len(warmups), "unsteady_forks": sum(not w["steady"] for w in warmups),
            "longest_seconds": max(w["seconds"] for w in warmups)}
