"""Why JVM rows were noisier than `openssl speed`'s, measured side by side in one run.

Forks of the arms take turns, so a busy spell of this shared machine falls on all of them:
  jvm-1s-5%   the JVM loop (JPype, AES-256-CBC doFinal on 38 bytes) after 0.1.0's warm-up: at least
              1 s, until 5 chunks agree within 5% and the JIT is idle; then 10 rounds of 0.5 s
  jvm-3s-2%   the same after a longer, stricter warm-up: at least 3 s, chunks within 2%
  jvm-stream  as jvm-1s-5%, the stream shape: update into one buffer, nothing allocated, no GC
  jvm-g1-16m      as jvm-1s-5% with -Xmn16m: a small fixed young generation under G1
  jvm-serial-16m  the same under the serial collector (-XX:+UseSerialGC -Xmn16m)
  jvm-thp     as jvm-1s-5% with -XX:+UseTransparentHugePages: the young generation on 2 MiB pages
  c-message   jvmbridge's C loop (the same OpenSSL as `openssl speed`, no JVM, no GC), per message
              (EVP init, update, final), warmed up and timed exactly as the JVM arms: 10 rounds of 0.5 s
  c-stream    the same, one EVP update per 38 bytes, as `openssl speed` (round length aside)
  openssl     `openssl speed -elapsed` (wall clock, as compare runs it): 10 runs of 1 s
Per fork: the rounds' rsd, the first round against the median, and for the JVM the loop thread's
CPU time against wall time (equal: the thread was not descheduled) and GC/JIT milliseconds
inside the rounds. Prints one line per fork, then the medians per arm.

    python benchmarks/jvm_noise.py [forks per arm, default 6] [arm ...]   (default: every arm)
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys

import _common

# (warm-up seconds at least, chunks agreeing within, shape, JVM options): the loop as compare runs
# it, a longer and stricter warm-up, the stream shape (update into one buffer: no allocation, no
# GC), the loop with a small fixed young generation (many short collections that every round
# shares alike, and garbage that stays in the CPU's caches) under G1 and under the serial collector,
# and with the heap on transparent huge pages (fewer TLB misses while allocating).
ARMS = {"jvm-1s-5%": (1.0, 0.05, "message", ()), "jvm-3s-2%": (3.0, 0.02, "message", ()),
        "jvm-stream": (1.0, 0.05, "stream", ()),
        "jvm-g1-16m": (1.0, 0.05, "message", ("-Xmn16m",)),
        "jvm-serial-16m": (1.0, 0.05, "message", ("-XX:+UseSerialGC", "-Xmn16m")),
        "jvm-thp": (1.0, 0.05, "message", ("-XX:+UseTransparentHugePages",))}
ROUNDS = 10
# How each fork is timed: rounds (openssl: runs of 1 s), round seconds, warm-up seconds at most;
# quick mode's the least that still gives a spread of rounds, for one arm of each kind of fork.
TIMING = {"rounds": ROUNDS, "round_seconds": 0.5, "warmup_max_seconds": 15.0}
QUICK_TIMING = {"rounds": 2, "round_seconds": 0.01, "warmup_max_seconds": 0.5}
QUICK_ARMS = ("jvm-1s-5%", "c-message", "openssl")


def jvm_fork(timing: dict, min_seconds: float, tolerance: float, shape: str, options: tuple[str, ...]) -> dict:
    import jpype

    from jvmbridge.forks.measure import warm_up
    from jvmbridge.harness import harness_jar

    jpype.startJVM(*options, classpath=[str(harness_jar())], convertStrings=False)
    harness_class = jpype.JClass("jvmbridge.harness.AesHarness")
    management = jpype.JClass("java.lang.management.ManagementFactory")
    compiler, threads = management.getCompilationMXBean(), management.getThreadMXBean()
    collectors = list(management.getGarbageCollectorMXBeans())
    data = jpype.JArray(jpype.JByte)
    harness = harness_class("AES/CBC/PKCS5Padding", "", False, data(bytes(32)), data(bytes(16)), data(bytes(38)))

    def gc_ms() -> int:
        return sum(int(c.getCollectionTime()) for c in collectors)

    def gc_count() -> int:
        return sum(int(c.getCollectionCount()) for c in collectors)

    loop = harness.run if shape == "message" else harness.runStream
    max_seconds = timing["warmup_max_seconds"]
    warmup = warm_up(lambda n: int(loop(n)), min(min_seconds, max_seconds), max_seconds,
                     lambda: int(compiler.getTotalCompilationTime()), tolerance)
    per_op, cpu_over_wall, gc, jit, counted = [], [], 0, 0, gc_count()
    per_round = max(1, int(timing["round_seconds"] * 1e9 / max(warmup.ns_per_op, 1e-3)))  # a round's time at warm-up speed
    for n in [per_round] * timing["rounds"]:
        cpu0, gc0, jit0 = threads.getCurrentThreadCpuTime(), gc_ms(), compiler.getTotalCompilationTime()
        ns = int(loop(n))
        cpu_over_wall.append((threads.getCurrentThreadCpuTime() - cpu0) / ns)
        gc, jit = gc + gc_ms() - gc0, jit + int(compiler.getTotalCompilationTime()) - jit0
        per_op.append(ns / n)
    return {"per_op": per_op, "warmup_s": warmup.seconds, "cpu_over_wall": min(cpu_over_wall), "gc_ms": gc,
            "gc_count": gc_count() - counted, "jit_ms": jit}


def c_fork(timing: dict, shape: str) -> dict:
    from jvmbridge.engines.c_loop import loop_part
    from jvmbridge.forks.measure import timed_rounds, warm_up
    from jvmbridge.native import c_worker
    from jvmbridge.native.c_loop import library_path, load
    from jvmbridge.sampling.policy import Sampling
    from jvmbridge.sampling.workload import Operation, Workload

    # The C engine's own loop (compare's C loop rows), with the JVM arms' warm-up and rounds.
    part = loop_part(Workload(Operation(shape=shape), Sampling(rounds=timing["rounds"],
                                                               round_seconds=timing["round_seconds"])))
    loop = c_worker.loop(load(library_path()), part)
    max_seconds = timing["warmup_max_seconds"]
    warmup = warm_up(loop.run, min(1.0, max_seconds), max_seconds)
    count = max(1, round(timing["round_seconds"] * 1e9 / warmup.ns_per_op))
    rounds = timed_rounds(loop.run, [count] * timing["rounds"])
    return {"per_op": [r["ns"] / r["iterations"] for r in rounds]}


def openssl_fork(timing: dict) -> dict:
    per_op = []
    for _ in range(timing["rounds"]):
        said = subprocess.run(["openssl", "speed", "-elapsed", "-mr", "-seconds", "1", "-bytes", "38", "-evp",
                               "aes-256-cbc"], capture_output=True, text=True)
        count, seconds = re.search(r"\+R:(\d+):[^:]+:([\d.]+)", said.stdout + said.stderr).groups()
        per_op.append(float(seconds) * 1e9 / int(count))
    return {"per_op": per_op}


def describe(arm: str, fork: dict) -> str:
    values = fork["per_op"]
    line = (f"{arm:14} median {statistics.median(values):6.1f} ns/op  rsd {fork['rsd']:.2%}  "
            f"first/median {values[0] / statistics.median(values):.3f}")
    if "gc_ms" in fork:
        line += (f"  warm-up {fork['warmup_s']:.1f} s  thread CPU/wall >= {fork['cpu_over_wall']:.3f}  "
                 f"GC {fork['gc_ms']} ms in {fork['gc_count']}  JIT {fork['jit_ms']} ms in the rounds")
    return line


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("forks", nargs="?", type=int, help="forks per arm (default 6; quick: 1)")
    parser.add_argument("arms", nargs="*", help="arms to run (default: every arm; quick: one of each kind)")
    parser.add_argument("--fork", metavar="ARM", help=argparse.SUPPRESS)  # one fork, in a process of its own
    args = parser.parse_args()
    timing = QUICK_TIMING if args.quick else TIMING
    if args.fork:
        arm = args.fork
        print(json.dumps(openssl_fork(timing) if arm == "openssl" else c_fork(timing, arm[2:]) if arm.startswith("c-")
                         else jvm_fork(timing, *ARMS[arm])))
        return
    _common.begin(args)
    forks = args.forks or (1 if args.quick else 6)
    arms = args.arms or (QUICK_ARMS if args.quick else (*ARMS, "c-message", "c-stream", "openssl"))
    found: dict[str, list[dict]] = {arm: [] for arm in arms}
    for _ in range(forks):
        for arm in found:  # in turns: each arm sees the same spells of a busy machine
            done = subprocess.run([sys.executable, __file__, "--fork", arm, *(["--quick"] if args.quick else [])],
                                  capture_output=True, text=True, check=True)
            fork = json.loads(done.stdout.strip().splitlines()[-1])
            fork["rsd"] = statistics.stdev(fork["per_op"]) / statistics.fmean(fork["per_op"])
            found[arm].append(fork)
            print(describe(arm, fork), flush=True)
    print()
    for arm, done in found.items():
        print(f"{arm:14} median rsd over {len(done)} forks {statistics.median(f['rsd'] for f in done):.2%}; "
              f"median ns/op {statistics.median(statistics.median(f['per_op']) for f in done):.1f}; "
              f"worst first/median {max(f['per_op'][0] / statistics.median(f['per_op']) for f in done):.3f}")
    _common.save(args, {"timing": timing, "forks": found})


if __name__ == "__main__":
    main()
