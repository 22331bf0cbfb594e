"""What one JVM measuring several sizes costs the later ones: a size alone in a fresh JVM, against
the same size measured right after another in the same JVM, side by side in one run.

Each fork is a fresh JVM (JPype, AES-256-CBC encryption, doFinal per message as compare's
message shape): "alone" measures the size only; "after-N" first measures N-byte messages
(warm-up and rounds as compare's), then the size. "own-class" is "after-N" with the size's loop in
a copy of the harness class from a class loader of its own, so only the JDK's code is shared: it
tells whether the profile that matters is the harness's or the JCE's. Each measurement: warm-up
until steady (at least 1 s, the JIT idle), then the median of 5 rounds of 0.5 s. Arms take turns
fork by fork, so a busy spell of the machine falls on all of them.

    python benchmarks/jvm_order.py [forks, default 4] [size, default 16] [other size, default 16384]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

import _common

ARMS = ("alone", "after", "own-class")
# Each measurement's warm-up (seconds at least, at most) and rounds (count, seconds); quick mode's
# the least that still times the loop.
TIMING = {"warmup": (1.0, 15.0), "rounds": (5, 0.5)}
QUICK_TIMING = {"warmup": (0.1, 0.5), "rounds": (2, 0.01)}


def fork(timing: dict, arm: str, size: int, other: int) -> float:
    import jpype

    from jvmbridge.forks.measure import warm_up
    from jvmbridge.harness import harness_jar

    jar = str(harness_jar())
    jpype.startJVM(classpath=[jar], convertStrings=False)
    data = jpype.JArray(jpype.JByte)
    compiler = jpype.JClass("java.lang.management.ManagementFactory").getCompilationMXBean()
    shared = jpype.JClass("jvmbridge.harness.AesHarness")

    def median_ns(harness_class, message_bytes: int) -> float:
        harness = harness_class("AES/CBC/PKCS5Padding", "", False, data(bytes(32)), data(bytes(16)),
                                data(bytes(message_bytes)))

        def run(n: int) -> int:
            return int(harness.run(n))

        warmup = warm_up(run, *timing["warmup"], lambda: int(compiler.getTotalCompilationTime()))
        rounds, seconds = timing["rounds"]
        per_round = max(1, int(seconds * 1e9 / max(warmup.ns_per_op, 1e-3)))  # a round's time at warm-up speed
        return statistics.median(run(per_round) / per_round for _ in range(rounds))

    if arm != "alone":
        median_ns(shared, other)
    harness_class = shared
    if arm == "own-class":
        url, loader = jpype.JClass("java.net.URL"), jpype.JClass("java.lang.ClassLoader")
        own = jpype.JClass("java.net.URLClassLoader")(
            jpype.JArray(url)([jpype.JClass("java.io.File")(jar).toURI().toURL()]), loader.getPlatformClassLoader())
        harness_class = jpype.JClass("jvmbridge.harness.AesHarness", loader=own)
    return median_ns(harness_class, size)


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("forks", nargs="?", type=int, help="forks per arm (default 4; quick: 1)")
    parser.add_argument("size", nargs="?", type=int, default=16, help="message bytes measured (default 16)")
    parser.add_argument("other", nargs="?", type=int, default=16384, help="message bytes measured first (default 16384)")
    parser.add_argument("--fork", metavar="ARM", help=argparse.SUPPRESS)  # one fork, in a process of its own
    args = parser.parse_args()
    timing = QUICK_TIMING if args.quick else TIMING
    size, other = args.size, args.other
    if args.fork:
        print(json.dumps(fork(timing, args.fork, size, other)))
        return
    _common.begin(args)
    forks = args.forks or (1 if args.quick else 4)
    found: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for _ in range(forks):
        for arm in ARMS:
            done = subprocess.run([sys.executable, __file__, "--fork", arm, str(forks), str(size), str(other),
                                   *(["--quick"] if args.quick else [])], capture_output=True, text=True, check=True)
            found[arm].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"{arm:10} {found[arm][-1]:10.1f} ns/op", flush=True)
    alone = statistics.median(found["alone"])
    print(f"\n{size} B messages, median ns/op of {forks} forks (each the median of its {timing['rounds'][0]} rounds):")
    for arm, values in found.items():
        name = arm if arm == "alone" else f"{arm} {other} B"
        print(f"{name:22} {statistics.median(values):10.1f}  x{statistics.median(values) / alone:.2f}  "
              f"[{', '.join(f'{v:.1f}' for v in values)}]")
    _common.save(args, {"size": size, "other": other, "timing": timing, "ns_per_op": found,
                        "against_alone": {arm: statistics.median(values) / alone for arm, values in found.items()}})


if __name__ == "__main__":
    main()
