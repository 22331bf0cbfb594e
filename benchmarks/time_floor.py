"""The least timed time a saved run's rows would have needed for their target interval, at the noise
they showed: per row the forks jvmbridge's stopping rule would need (stats.summary.forks_for, never fewer
than the run's --forks) and the timed rounds those forks hold; beside it the timed rounds of the
run's minimum alone (--forks forks; each `openssl speed` run is a fork of one round), the time a perfectly
quiet machine would take. Start-up and warm-up come on top: both totals are floors.

Issues 11 and 16 set targets in wall time (±2% in at most 3 forks; a 28-row sweep in 3 minutes):
this tells whether the noise a run met allowed them at all, whatever jvmbridge did around its rounds.

    python benchmarks/time_floor.py [RUN.jsonl ...] [--target 0.02]   (default: the newest saved run;
                                                                   --quick: a tiny C-loop run)
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import _common

from jvmbridge.report.history import configuration, tidy_frame
from jvmbridge.sampling.policy import MAX_FORKS
from jvmbridge.saved.store import ResultFileError, data_dir, read
from jvmbridge.stats.summary import CONFIDENCE, forks_for, summarize


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("runs", nargs="*", help="saved runs (default: the newest in jvmbridge's data folder)")
    parser.add_argument("--target", type=float, default=0.02, help="relative half-width aimed for (0.02: ±2%%)")
    args = parser.parse_args()
    _common.begin(args)
    if args.quick and not args.runs:
        with tempfile.TemporaryDirectory() as scratch:
            _common.quick_run(Path(scratch) / "run.jsonl", forks=2)
            report(args, parser, [Path(scratch) / "run.jsonl"])
    else:
        report(args, parser, args.runs or [max(data_dir().glob("*.jsonl"), key=lambda p: p.stat().st_mtime)])


def report(args, parser, paths: list) -> None:
    target = args.target
    try:
        loaded = read(paths)
    except ResultFileError as e:
        parser.error(str(e))
    frame = tidy_frame(loaded)
    print(f"{', '.join(map(str, paths))}: {len(frame)} rows; target ±{target:.0%} ({CONFIDENCE:.0%})\n")
    print(f"{'forks':>5} {'±reached':>9} {'rsd':>6} {'forks needed':>12} {'timed s needed':>14} "
          f"{'timed s, least':>14}  configuration")
    total, least, beyond = 0.0, 0.0, 0
    rows = []
    for row in frame.itertuples():
        asked = loaded.runs[row.run_id]["workload"]
        per_fork = row.rounds // row.forks
        rounds = [{"iterations": 1, "ns": ns} for ns in row.round_ns_per_op]
        summary = summarize([rounds[i:i + per_fork] for i in range(0, len(rounds), per_fork)])
        fewest = asked["forks"]  # `openssl speed` too: each run is a fork of one round (since 0.3.0)
        needed = forks_for(summary, target, MAX_FORKS)
        per_sample_s = row.jmh_score * row.iterations / row.threads / row.rounds / 1e9
        timed = None if needed is None else max(needed, fewest) * per_fork * per_sample_s
        at_least = fewest * per_fork * per_sample_s
        total, least, beyond = total + (timed or 0.0), least + at_least, beyond + (needed is None)
        rows.append({"configuration": configuration(row), "forks": row.forks, "reached": summary.relative_error,
                     "rsd": summary.rsd, "forks_needed": needed, "timed_seconds_needed": timed,
                     "timed_seconds_least": at_least})
        print(f"{row.forks:>5} {summary.relative_error:>8.1%} {'-' if summary.rsd is None else f'{summary.rsd:.1%}':>6} "
              f"{needed if needed else f'>{MAX_FORKS}':>12} {f'{timed:.1f}' if timed else '-':>14} "
              f"{at_least:>14.1f}  {configuration(row)}")
    print(f"\ntimed rounds alone, every row within ±{target:.0%} at the noise seen: at least {total:.0f} s"
          + (f" (and {beyond} row(s) would need more than {MAX_FORKS} forks)" if beyond else "")
          + f"; at the run's minimum forks: {least:.0f} s")
    _common.save(args, {"runs": [str(p) for p in paths], "target": target, "rows": rows, "timed_seconds_needed": total,
                        "rows_beyond_max_forks": beyond, "timed_seconds_least": least})


if __name__ == "__main__":
    main()
