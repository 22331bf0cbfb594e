"""Do a saved run's forks differ because the machine drifted while they ran, or each by its own luck?

For each row of a saved compare: the spread between its fork summaries (the figure's own statistic,
the lower quartile of the fork's undisturbed rounds) and the same over every round, disturbed or
not, to see what setting rounds apart bought; and von Neumann's ratio of the forks in run order
(the mean squared difference of neighbours over twice the variance): about 1 when each fork's
level is its own, well below 1 when neighbours share a level because the machine drifted. Forks of
two configurations run in turns share a drift and not a fork's own luck: for each ratio the run
took from such pairs, its interval beside the one the two rows' own intervals would give, and how
closely the two rows' forks moved together turn by turn (Pearson's r of their summaries).

    python benchmarks/fork_drift.py RUN.jsonl   (--quick without RUN: a tiny C-loop run of 3 forks)
"""
from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

import _common

from jvmbridge.api import load
from jvmbridge.comparison.ratios import RatioKind, operation_keys, speedup
from jvmbridge.results import by_fork
from jvmbridge.stats.summary import fork_summary


def fork_summaries(row, kept_only: bool) -> list[float]:
    """Each fork's summary as the figure takes it, in the order the forks ran; a fork with no round left is skipped."""
    kept = ([ns for ns, aside in fork if not (kept_only and aside)]
            for fork in by_fork(row.round_fork, zip(row.round_ns_per_op, row.round_set_aside)))
    return [fork_summary(rounds) for rounds in kept if rounds]


def von_neumann(values: list[float]) -> float:
    squared_steps = statistics.fmean((b - a) ** 2 for a, b in zip(values, values[1:]))
    return squared_steps / (2 * statistics.variance(values))


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("run", nargs="?", type=Path, help="a saved run (JSON lines); --quick makes one without")
    args = parser.parse_args()
    _common.begin(args)
    if args.run:
        report(args, load(args.run))
    elif args.quick:
        with tempfile.TemporaryDirectory() as scratch:
            report(args, _common.quick_run(Path(scratch) / "run.jsonl", forks=3))
    else:
        parser.error("a saved run is needed (or --quick)")


def report(args, frame) -> None:
    found, ratios = [], []
    print(f"{'row':<40} {'forks':>5} {'rsd kept':>8} {'rsd all':>8} {'von Neumann':>11}")
    for row in frame.itertuples():
        kept, every = fork_summaries(row, True), fork_summaries(row, False)
        if len(kept) < 3:
            continue
        found.append({"engine": row.engine, "setting": row.setting, "forks": len(kept),
                     "rsd_kept": statistics.stdev(kept) / statistics.fmean(kept),
                     "rsd_all": statistics.stdev(every) / statistics.fmean(every), "von_neumann": von_neumann(kept)})
        print(f"{row.engine + ', ' + row.setting:<40} {len(kept):>5} {found[-1]['rsd_kept']:>8.1%} "
              f"{found[-1]['rsd_all']:>8.1%} {found[-1]['von_neumann']:>11.2f}")
    print(f"\n{'speedup of rows run in turns':<52} {'times':>6} {'paired ±':>9} {'unpaired ±':>10} {'turns':>5} {'r':>5}")
    keys = [key for key in ("in_turns", *operation_keys(frame)) if key in frame]
    for _, rows in frame[frame.get("in_turns", "").astype(bool)].groupby(keys):
        on, off = rows[rows.accelerated], rows[~rows.accelerated]
        if len(on) != 1 or len(off) != 1:
            continue
        on, off = on.iloc[0], off.iloc[0]
        paired, alone = speedup(RatioKind.SPEEDUP, "", on, off, one_run=True), speedup(RatioKind.SPEEDUP, "", on, off)
        same = set(on.fork_turns) & set(off.fork_turns)
        if len(same) < 2:  # forks whose rounds were all set aside leave too few turns to correlate
            continue
        moved = [[ns for turn, ns in zip(row.fork_turns, row.fork_ns_per_op) if turn in same] for row in (on, off)]
        ratios.append({"engine": on.engine, "message_bytes": on.message_bytes, "times": paired.value,
                       "paired_half": _half(paired), "unpaired_half": _half(alone), "turns": paired.turns,
                       "r": statistics.correlation(*moved)})
        print(f"{on.engine + ', ' + str(on.message_bytes) + ' B':<52} {paired.value:>6.2f} {_half(paired):>9.1%} "
              f"{_half(alone):>10.1%} {paired.turns:>5} {ratios[-1]['r']:>5.2f}")
    _common.save(args, {"rows": found, "speedups_in_turns": ratios})


def _half(ratio) -> float:
    """The interval's half-width relative to the ratio (the mean of its two sides)."""
    return (ratio.high - ratio.low) / 2 / ratio.value


if __name__ == "__main__":
    main()
