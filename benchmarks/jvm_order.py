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

import json
import statistics
import subprocess
import sys

ARMS = ("alone", "after", "own-class")


def fork(arm: str, size: int, other: int) -> float:
    import jpype

    from jvmbridge.harness import harness_jar
    from jvmbridge.measure import round_counts, warm_up

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

        warmup = warm_up(run, 1.0, 15.0, lambda: int(compiler.getTotalCompilationTime()))
        return statistics.median(run(n) / n for n in round_counts(None, 5, 0.5, warmup.ns_per_op))

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
    if sys.argv[1:2] == ["--fork"]:
        print(json.dumps(fork(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
        return
    forks, size, other = (int(a) for a in (sys.argv[1:] + ["4", "16", "16384"][len(sys.argv) - 1:])[:3])
    found: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for _ in range(forks):
        for arm in ARMS:
            done = subprocess.run([sys.executable, __file__, "--fork", arm, str(size), str(other)],
                                  capture_output=True, text=True, check=True)
            found[arm].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"{arm:10} {found[arm][-1]:10.1f} ns/op", flush=True)
    alone = statistics.median(found["alone"])
    print(f"\n{size} B messages, median ns/op of {forks} forks (each the median of its 5 rounds):")
    for arm, values in found.items():
        name = arm if arm == "alone" else f"{arm} {other} B"
        print(f"{name:22} {statistics.median(values):10.1f}  x{statistics.median(values) / alone:.2f}  "
              f"[{', '.join(f'{v:.1f}' for v in values)}]")


if __name__ == "__main__":
    main()
