"""The C loop against `openssl speed` and the JVM, side by side in one run (issue 13's targets).

  stream shape: the C loop's update loop against `openssl speed -evp` on the same libcrypto, at
                every size (target at 16 KiB: 1.00 +- 0.03)
  message shape: the JVM's doFinal against the same per-message work in C, intrinsics/AES-NI on
                and off, at 16, 38, 1024 and 16384 bytes

    python benchmarks/c_loop.py [--max-forks 3]
"""
from __future__ import annotations

import sys

import jvmbridge
from jvmbridge.comparison.ratios import RatioKind, speedup

SIZES = (16, 38, 1024, 16384)


def main() -> None:
    max_forks = int(sys.argv[sys.argv.index("--max-forks") + 1]) if "--max-forks" in sys.argv else 3
    frame = jvmbridge.compare(engine=["jvm", "c-loop", "openssl-cli"], sizes=list(SIZES),
                              shape=["message", "stream"], max_forks=max_forks)
    print(f"{frame.attrs['metadata']['cpu']['model']}; {', '.join(sorted(set(frame.implementation)))}; "
          f"saved to {frame.attrs['output']}")

    def row(engine: str, shape: str, size: int, accelerated: bool):
        rows = frame[(frame.engine == engine) & (frame["shape"] == shape) & (frame.message_bytes == size)
                     & (frame.accelerated == accelerated)]
        return rows.iloc[0] if len(rows) else None

    print("\nstream shape, AES-NI on: C loop against openssl speed (ratio of means, 99.9% interval)")
    for size in SIZES:
        c, speed = row("OpenSSL C loop (jvmbridge)", "stream", size, True), row("OpenSSL speed (C loop)", "stream", size, True)
        ratio = speedup(RatioKind.VERSUS, "", c, speed)
        print(f"  {size:>6} B: C {c.ns_per_op:9.1f} ns, openssl speed {speed.ns_per_op:9.1f} ns, "
              f"C is {ratio.describe()} as fast")
    print("\nmessage shape: JVM against the C loop (ratio of means; above 1: the JVM is faster)")
    for size in SIZES:
        for accelerated, state in ((True, "on "), (False, "off")):
            java, c = row("JVM", "message", size, accelerated), row("OpenSSL C loop (jvmbridge)", "message", size,
                                                                     accelerated)
            ratio = speedup(RatioKind.VERSUS, "", java, c)
            print(f"  {size:>6} B, acceleration {state}: JVM {java.ns_per_op:10.1f} ns, C {c.ns_per_op:10.1f} ns, "
                  f"{ratio.describe()}")


if __name__ == "__main__":
    main()
