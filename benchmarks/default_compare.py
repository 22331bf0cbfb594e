"""Issue targets for the default `jvmbridge compare`: its wall time, every ratio's interval against
the ±2% target, the host's speed, and where a fork's time goes (starting the workers, warming each
configuration up, the timed slices). One row per run, for the table in benchmarks/README.md.

    python benchmarks/default_compare.py [--runs N] [--keep FOLDER] [COMPARE OPTION ...]
        (default: 1 run, no options)
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common

# Quick mode's compare, unless options are given: the C loop alone, two forks of five short cycles.
QUICK = ["--engine", "c-loop", "--shape", "stream", "--forks", "2", "--max-forks", "2"]


def run(quick: bool, options: list[str], keep: Path | None) -> tuple[float, dict, float]:
    """One compare in a data directory of its own: its wall time, JSON document, and how many of
    the other vCPUs' seconds other processes used meanwhile (the load it ran beside). ``keep``: a
    folder for its run file, which `jvmbridge report` shows again as compare printed it."""
    with tempfile.TemporaryDirectory() as data:
        saved = ["--output", str(keep / time.strftime("%Y%m%dT%H%M%SZ.jsonl", time.gmtime()))] if keep else []
        before, started = _busy_seconds(), time.monotonic()
        done = subprocess.run([*_common.jvmbridge_command(quick), "compare", "--quiet", "--format", "json", *saved,
                               *options], capture_output=True, text=True, env={**os.environ, "XDG_DATA_HOME": data})
        seconds = time.monotonic() - started
        busy = _busy_seconds() - before
    if done.returncode not in (0, 1):
        sys.exit(f"compare {' '.join(options)} failed: {done.stderr.strip()[-400:]}")
    return seconds, json.loads(done.stdout), busy / seconds


def _busy_seconds() -> float:
    """Every CPU's non-idle seconds since boot (/proc/stat), this run's own included."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def where_the_time_went(document: dict) -> dict:
    """Per fork, on average: its seconds, the slices' (every row's timed slices), the rest (the
    first fork's warm-ups, starting the workers and waiting for their set-up, the round trips, the
    yardstick's slices, which are no row's); the first fork's and the others' seconds (from the
    second fork on, a fork's warm-ups ran beside the slices of the one before); and the warm-ups'
    seconds (every row's, one after another)."""
    rows = [row for row in document["results"] if row.get("interleaved")]
    if not rows:
        return {}
    # A row may sit out forks after the first stage (decision 0014): each fork's seconds from any
    # row that ran it, and how many rows did. A row's forks are its rounds' (fork_turns names only
    # the forks whose rounds were kept; fork_seconds has every fork's).
    seconds: dict[int, float] = {}
    rows_in: dict[int, int] = {}
    for row in rows:
        for fork, spent in zip(sorted(set(row["round_fork"])), row["fork_seconds"], strict=True):
            seconds[fork], rows_in[fork] = spent, rows_in.get(fork, 0) + 1
    each = [seconds[fork] for fork in sorted(seconds)]
    forks = len(each)
    fewer = [spent for fork, spent in seconds.items() if rows_in[fork] < max(rows_in.values())]
    warm = sum(row["warmup_seconds"] or 0 for row in rows) / forks  # each row's: its forks' in all
    slices = sum(ns * n for row in rows for ns, n in zip(row["round_ns_per_op"], row["round_iterations"])) / 1e9 / forks
    return {"forks": forks, "fork_seconds": statistics.fmean(each), "slice_seconds": slices,
            "rest_seconds": statistics.fmean(each) - slices, "first_seconds": each[0],
            "later_seconds": statistics.fmean(each[1:]) if len(each) > 1 else None, "warmup_seconds": warm,
            "fewer_rows_forks": len(fewer), "fewer_rows_seconds": statistics.fmean(fewer) if fewer else None}


def relative_error(ratio: dict) -> float | None:
    """The wider side of a ratio's interval, relative to it; None without one."""
    if ratio["high"] is None or ratio["low"] is None:
        return None
    return max(ratio["high"] / ratio["times"] - 1, 1 - ratio["low"] / ratio["times"])


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("--runs", type=int, default=1, help="runs one after another (default 1)")
    parser.add_argument("--keep", type=Path, metavar="FOLDER", help="keep each run's file in FOLDER")
    parser.add_argument("options", nargs="*", help="compare's options (default: none, as a user runs it)")
    args = parser.parse_args()
    _common.begin(args)
    options = args.options or (QUICK if args.quick else [])
    found = []
    for _ in range(args.runs):
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        seconds, document, busy = run(args.quick, options, args.keep)
        ratios = [{"label": r["label"], "times": r["times"], "error": relative_error(r)} for r in document["ratios"]]
        speed = document["metadata"].get("host_speed") or {}
        time_went = where_the_time_went(document)
        found.append({"started": started, "seconds": seconds, "cpus_busy": busy, "ratios": ratios,
                      "host_speed": speed, "fork": time_went, "document": document})
        print(f"jvmbridge compare {' '.join(options)}  started {started}: {seconds:.0f} s wall, "
              f"{busy:.2f} vCPUs busy on average (this run's own included)")
        within = sum(r["error"] is not None and r["error"] <= 0.02 for r in ratios)
        print(f"  {within} of {len(ratios)} ratios within ±2%:")
        for r in ratios:
            shown = f"±{r['error']:.1%}" if r["error"] is not None else "no interval"
            print(f"    {r['times']:6.2f}x {shown:>11}  {r['label']}")
        if speed:
            print(f"  host speed {speed.get('speed', float('nan')):.2f} of its reference")
        if time_went:
            later = time_went["later_seconds"]
            print(f"  a fork, on average of {time_went['forks']}: {time_went['fork_seconds']:.1f} s = "
                  f"slices {time_went['slice_seconds']:.1f} s + the rest {time_went['rest_seconds']:.1f} s "
                  f"(the first fork's warm-ups, starts, round trips, the yardstick)")
            print(f"    the first fork {time_went['first_seconds']:.1f} s"
                  + (f", the others {later:.1f} s" if later is not None else "")
                  + (f" ({time_went['fewer_rows_forks']} of fewer rows: {fewer:.1f} s)"
                     if (fewer := time_went["fewer_rows_seconds"]) is not None else "")
                  + f"; warm-ups {time_went['warmup_seconds']:.1f} s a fork, beside the slices of the fork before"
                  " from the second on")
    _common.save(args, {"options": options, "runs": found})


if __name__ == "__main__":
    main()
