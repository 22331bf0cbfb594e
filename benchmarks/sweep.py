"""A size sweep in one run against the per-size runs it replaces, side by side.

    python benchmarks/sweep.py            # about 15 minutes on 2 vCPUs

Runs `jvmbridge compare --sizes sweep --engine jvm --engine openssl-cli` once (each fork's JVM
measures every size; `openssl speed` runs its own size list per process), then the same
configurations one size per `compare` (0.1.0's way: a fresh JVM per size and fork, `-bytes` per
size), and prints the wall time of each, how many rows reached the ±2% target, and per row the
sweep's figure against the per-size one: their ratio and whether their intervals overlap.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

from jvmbridge.workload import SWEEP_SIZES

ENGINES = ("--engine", "jvm", "--engine", "openssl-cli")


def compare(*args: str) -> tuple[list[dict], float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jvmbridge", "compare", *ENGINES, *args, "--quiet",
                           "--format", "json"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"compare {' '.join(args)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)["results"], seconds


def key(row: dict) -> tuple:
    return row["engine"], row["setting"], row["message_bytes"]


def main() -> None:
    swept, sweep_seconds = compare("--sizes", "sweep")
    per_size, per_size_seconds = [], 0.0
    for size in SWEEP_SIZES:
        rows, seconds = compare("--sizes", str(size))
        per_size += rows
        per_size_seconds += seconds
    print(f"sweep in one run: {sweep_seconds:.0f} s; per-size runs: {per_size_seconds:.0f} s; "
          f"{per_size_seconds / sweep_seconds:.2f}x as long")
    for name, rows in (("sweep", swept), ("per size", per_size)):
        within = sum(r["ns_per_op_error"] is not None and r["ns_per_op_error"] / r["ns_per_op_mean"] <= 0.02
                     for r in rows)
        print(f"{name}: {within} of {len(rows)} rows within ±2%; forks {sum(r['forks'] for r in rows)}")
    print()
    print("| row | sweep ns/op | ±99.9% | forks | per size ns/op | ±99.9% | forks | ratio | intervals overlap |")
    print("|---|---|---|---|---|---|---|---|---|")
    by_key = {key(r): r for r in per_size}
    for row in swept:
        other = by_key.get(key(row))
        if other is None:
            continue
        a, ea = row["ns_per_op_mean"], row["ns_per_op_error"] or float("inf")
        b, eb = other["ns_per_op_mean"], other["ns_per_op_error"] or float("inf")
        overlap = a - ea <= b + eb and b - eb <= a + ea
        print(f"| {row['engine']}, {row['setting']}, {row['message_bytes']} B | {a:,.1f} | ±{ea / a:.1%} | "
              f"{row['forks']} | {b:,.1f} | ±{eb / b:.1%} | {other['forks']} | {a / b:.3f} | "
              f"{'yes' if overlap else 'no'} |")


if __name__ == "__main__":
    main()
