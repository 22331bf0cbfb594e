"""What does `compare --total-time` buy, and what does it cost? A default compare without a limit,
then the same with `--total-time SECONDS` (default 120), each in a data directory of its own (no
earlier run chooses its rounds): each run's wall time; per row its forks and interval in both;
per ratio its interval in both.

    python benchmarks/total_time.py [--quick] [--json FILE] [SECONDS] [COMPARE OPTION ...]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import _common

# Quick mode's compare, unless options are given: the C loop, one fork of two 10 ms rounds.
QUICK = ["--engine", "c-loop", "--rounds", "2", "--round-time", "0.01", "--forks", "1", "--max-forks", "1"]


def run(quick: bool, options: list[str]) -> tuple[float, dict]:
    """One compare's wall time and JSON document."""
    with tempfile.TemporaryDirectory() as data:
        started = time.monotonic()
        done = subprocess.run([*_common.jvmbridge_command(quick), "compare", "--quiet", "--format", "json", *options],
                              capture_output=True, text=True, env={**os.environ, "XDG_DATA_HOME": data})
        seconds = time.monotonic() - started
    if done.returncode not in (0, 1):  # 1: a row noted a failed fork; its document is still whole
        sys.exit(f"compare {' '.join(options)} failed: {done.stderr.strip()[-400:]}")
    return seconds, json.loads(done.stdout)


def half(ratio: dict) -> str:
    """A ratio's interval as ± around its value (the larger side), or "-" without one."""
    if ratio["high"] is None:
        return "-"
    return f"{max(ratio['high'] / ratio['times'] - 1, 1 - ratio['low'] / ratio['times']):.1%}"


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("limit", nargs="?", metavar="SECONDS", help="--total-time's seconds (default 120; quick: 5)")
    parser.add_argument("options", nargs=argparse.REMAINDER, help="compare's options, for both runs")
    args = parser.parse_args()
    _common.begin(args)
    limit = args.limit or ("5" if args.quick else "120")
    options = args.options or (QUICK if args.quick else [])
    print(f"jvmbridge compare {' '.join(options)} without and with --total-time {limit}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    (free_s, free), (limited_s, limited) = run(args.quick, options), run(args.quick, [*options, "--total-time", limit])
    print(f"wall time: {free_s:.0f} s without a limit, {limited_s:.0f} s with {limit} s\n")
    print(f"{'row':<60} {'forks':>5} {'±':>6} | {'forks':>5} {'±':>6}")
    for a, b in zip(free["results"], limited["results"]):
        label = f"{a['engine']}, {a['setting']}, {a['message_bytes']} B"
        errors = [f"{row['ns_per_op_error'] / row['ns_per_op']:.1%}" if row["ns_per_op_error"] else "-" for row in (a, b)]
        print(f"{label[:60]:<60} {a['forks']:>5} {errors[0]:>6} | {b['forks']:>5} {errors[1]:>6}")
    print(f"\n{'ratio':<90} {'times':>6} {'±':>6} | {'times':>6} {'±':>6}")
    for a, b in zip(free["ratios"], limited["ratios"]):
        print(f"{a['label'][:90]:<90} {a['times']:>6.2f} {half(a):>6} | {b['times']:>6.2f} {half(b):>6}")
    _common.save(args, {"options": options, "total_time": limit, "seconds": {"free": free_s, "limited": limited_s},
                        "rows": [{"label": f"{a['engine']}, {a['setting']}, {a['message_bytes']} B",
                                  "free": {"forks": a["forks"], "ns_per_op": a["ns_per_op"], "error": a["ns_per_op_error"]},
                                  "limited": {"forks": b["forks"], "ns_per_op": b["ns_per_op"], "error": b["ns_per_op_error"]}}
                                 for a, b in zip(free["results"], limited["results"])],
                        "ratios": [{"label": a["label"], "free": a, "limited": b}
                                   for a, b in zip(free["ratios"], limited["ratios"])]})


if __name__ == "__main__":
    main()
