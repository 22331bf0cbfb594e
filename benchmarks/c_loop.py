"""The C loop against `openssl speed` and the JVM, side by side in one run.

  stream shape: the C loop's update loop against `openssl speed -evp` on the same libcrypto, at
                every size (target at 16 KiB: 1.00 +- 0.03)
  message shape: the JVM's doFinal against the same per-message work in C, intrinsics/AES-NI on
                and off, at 16, 38, 1024 and 16384 bytes

    python benchmarks/c_loop.py [--max-forks 3]
"""
from __future__ import annotations

import _common

import jvmbridge
from jvmbridge.comparison.ratios import RatioKind, speedup

SIZES = (16, 38, 1024, 16384)
# Quick mode: one size, one fork of two 10 ms rounds per row, one JVM for both shapes (half the JVMs to start).
QUICK = {"sizes": [16], "forks": 1, "max_forks": 1, "rounds": 2, "round_time": 0.01, "shared_jvm": True}


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("--max-forks", type=int, default=3, help="compare's --max-forks (default 3)")
    args = parser.parse_args()
    _common.begin(args)
    options = QUICK if args.quick else {"sizes": list(SIZES), "max_forks": args.max_forks}
    frame = jvmbridge.compare(engine=["jvm", "c-loop", "openssl-cli"], shape=["message", "stream"], **options)
    sizes = options["sizes"]
    figures: dict = {"output": str(frame.attrs["output"]), "stream": [], "message": []}
    print(f"{frame.attrs['metadata']['cpu']['model']}; {', '.join(sorted(set(frame.implementation)))}; "
          f"saved to {frame.attrs['output']}")

    def row(engine: str, shape: str, size: int, accelerated: bool):
        rows = frame[(frame.engine == engine) & (frame["shape"] == shape) & (frame.message_bytes == size)
                     & (frame.accelerated == accelerated)]
        return rows.iloc[0] if len(rows) else None

    print("\nstream shape, AES-NI on: C loop against openssl speed (ratio of means, 99.9% interval)")
    for size in sizes:
        c, speed = row("OpenSSL C loop (jvmbridge)", "stream", size, True), row("OpenSSL speed (C loop)", "stream", size, True)
        ratio = speedup(RatioKind.VERSUS, "", c, speed)
        print(f"  {size:>6} B: C {c.ns_per_op:9.1f} ns, openssl speed {speed.ns_per_op:9.1f} ns, "
              f"C is {ratio.describe()} as fast")
        figures["stream"].append({"bytes": size, "c_ns": c.ns_per_op, "speed_ns": speed.ns_per_op,
                                  "ratio": ratio.as_dict()})
    print("\nmessage shape: JVM against the C loop (ratio of means; above 1: the JVM is faster)")
    for size in sizes:
        for accelerated, state in ((True, "on "), (False, "off")):
            java, c = row("JVM", "message", size, accelerated), row("OpenSSL C loop (jvmbridge)", "message", size,
                                                                     accelerated)
            ratio = speedup(RatioKind.VERSUS, "", java, c)
            print(f"  {size:>6} B, acceleration {state}: JVM {java.ns_per_op:10.1f} ns, C {c.ns_per_op:10.1f} ns, "
                  f"{ratio.describe()}")
            figures["message"].append({"bytes": size, "accelerated": accelerated, "jvm_ns": java.ns_per_op,
                                       "c_ns": c.ns_per_op, "ratio": ratio.as_dict()})
    _common.save(args, figures)


if __name__ == "__main__":
    main()
