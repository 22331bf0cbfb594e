"""A size sweep in one run against the per-size runs it replaces, side by side.

    python benchmarks/sweep.py            # about 20 minutes on 2 vCPUs

Runs `jvmbridge compare --sizes sweep --engine jvm --engine openssl-cli` twice, with `--shared-jvm`
(each fork's JVM measures every size) and as by default (JVMs of their own per size; `openssl
speed` runs a process per size either way), then the same configurations one size per `compare`
(0.1.0's way), and prints the wall time of each, how many rows
reached the ±2% target, and per row each sweep's figure against the per-size one: their ratio and
whether their intervals overlap.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

import _common

from jvmbridge.sampling.workload import SWEEP_SIZES

ENGINES = ("--engine", "jvm", "--engine", "openssl-cli")
# Quick mode: the C loop alone (no JVM to start, no 1 s `openssl speed` runs) at one size, a fork of two 10 ms rounds.
QUICK = ("--engine", "c-loop", "--forks", "1", "--max-forks", "1", "--rounds", "2", "--round-time", "0.01")
QUICK_SIZES = (16,)


def compare(command: list[str], *args: str) -> tuple[list[dict], float]:
    started = time.perf_counter()
    done = subprocess.run([*command, *args, "--quiet", "--format", "json"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"compare {' '.join(args)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["results"], seconds


def key(row: dict) -> tuple:
    return row["engine"], row["setting"], row["message_bytes"]


def main() -> None:
    parser = _common.parser(__doc__)
    args = parser.parse_args()
    _common.begin(args)
    _common.own_data_home()
    command = [*_common.jvmbridge_command(args.quick), "compare", *(QUICK if args.quick else ENGINES)]
    sizes, sweep = (QUICK_SIZES, ",".join(map(str, QUICK_SIZES))) if args.quick else (SWEEP_SIZES, "sweep")
    sweeps = {name: compare(command, "--sizes", sweep, *options)
              for name, options in (("shared JVM", ("--shared-jvm",)), ("sweep", ()))}
    per_size, per_size_seconds = [], 0.0
    for size in sizes:
        rows, seconds = compare(command, "--sizes", str(size))
        per_size += rows
        per_size_seconds += seconds
    figures: dict = {"runs": {}, "against_per_size": {}}
    for name, (rows, seconds) in {**sweeps, "per size": (per_size, per_size_seconds)}.items():
        within = sum(r["ns_per_op_error"] is not None and r["ns_per_op_error"] / r["ns_per_op"] <= 0.02
                     for r in rows)
        print(f"{name}: {seconds:.0f} s ({per_size_seconds / seconds:.2f}x faster than the per-size runs); "
              f"{within} of {len(rows)} rows within ±2%; forks {sum(r['forks'] for r in rows)}")
        figures["runs"][name] = {"seconds": seconds, "rows": len(rows), "rows_within_2_percent": within,
                                 "forks": sum(r["forks"] for r in rows)}
    by_key = {key(r): r for r in per_size}
    for name, (rows, _) in sweeps.items():
        print(f"\n{name} against the per-size runs:\n")
        print("| row | ns/op | ±99.9% | forks | per size ns/op | ±99.9% | forks | ratio | intervals overlap |")
        print("|---|---|---|---|---|---|---|---|---|")
        figures["against_per_size"][name] = []
        for row in rows:
            other = by_key.get(key(row))
            if other is None:
                continue
            a, ea = row["ns_per_op"], row["ns_per_op_error"] or float("inf")
            b, eb = other["ns_per_op"], other["ns_per_op_error"] or float("inf")
            overlap = a - ea <= b + eb and b - eb <= a + ea
            print(f"| {row['engine']}, {row['setting']}, {row['message_bytes']} B | {a:,.1f} | ±{ea / a:.1%} | "
                  f"{row['forks']} | {b:,.1f} | ±{eb / b:.1%} | {other['forks']} | {a / b:.3f} | "
                  f"{'yes' if overlap else 'no'} |")
            figures["against_per_size"][name].append({"row": list(key(row)), "ns_per_op": a, "per_size_ns_per_op": b,
                                                      "ratio": a / b, "intervals_overlap": overlap})
    _common.save(args, figures)


if __name__ == "__main__":
    main()
