"""Which statistic of a fork's rounds is most reproducible here: across forks of one run, and
between two runs made one after the other in this script.

Each run is a compare of the JVM and the C loop (38-byte AES-256-CBC per message, both settings),
a fixed number of forks of ROUNDS rounds of 0.5 s. For each candidate statistic of a fork's
rounds (mean, median, lower quartile, 20% trimmed mean, minimum, shorth) it prints, per row, the spread
of the fork statistics (their relative standard deviation) and how far the two runs' figures (the
mean of the fork statistics) lie apart. GC happens in every round of the JVM's message loop (a
few ms a round), so no statistic can leave it out by picking rounds.

    python benchmarks/fork_statistic.py [forks, default 8] [--keep DIR]   (the two runs' files kept in DIR)
    python benchmarks/fork_statistic.py RUN1.jsonl RUN2.jsonl                   (two saved runs instead)
"""
from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

import _common

from jvmbridge.api import compare, load
from jvmbridge.results import by_fork

ROUNDS = 10
# Quick mode: the C loop alone (no JVM to start), two forks (a spread between them) of two 10 ms rounds.
QUICK = {"engine": ["c-loop"], "rounds": 2, "forks": 2, "max_forks": 2, "round_time": 0.01}


def lower_quartile(values: list[float]) -> float:
    return statistics.quantiles(values, n=4, method="inclusive")[0]


def trimmed_mean(values: list[float], share: float = 0.2) -> float:
    ordered = sorted(values)
    cut = int(len(ordered) * share)
    return statistics.fmean(ordered[cut:len(ordered) - cut])


def shorth(values: list[float]) -> float:
    """The mean of the closest-together half of the values."""
    ordered = sorted(values)
    width = max(-(-len(ordered) // 2), min(len(ordered), 2))
    start = min(range(len(ordered) - width + 1), key=lambda i: ordered[i + width - 1] - ordered[i])
    return statistics.fmean(ordered[start:start + width])


CANDIDATES = {"mean": statistics.fmean, "median": statistics.median, "lower quartile": lower_quartile,
              "trimmed mean 20%": trimmed_mean, "minimum": min, "shorth": shorth}


def fork_rounds(row) -> list[list[float]]:
    """Each fork's rounds (ns/op), every round, disturbed or not."""
    return by_fork(row.round_fork, row.round_ns_per_op)


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("arguments", nargs="*", metavar="FORKS | RUN1.jsonl RUN2.jsonl",
                        help="forks per run (default 8), or two saved runs instead")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the two runs' files in DIR")
    args = parser.parse_args()
    _common.begin(args)
    arguments = args.arguments
    if arguments and arguments[0].endswith(".jsonl"):
        frames = [load(path) for path in arguments[:2]]
    else:
        forks = int(arguments[0]) if arguments else 8
        options = QUICK if args.quick else {"engine": ["jvm", "c-loop"], "rounds": ROUNDS, "forks": forks,
                                            "max_forks": forks}
        with tempfile.TemporaryDirectory() as scratch:
            folder = args.keep or Path(scratch)
            frames = [compare(**options, output=folder / f"run{number}.jsonl") for number in (1, 2)]
    runs = [{f"{row.engine}, {row.setting}": fork_rounds(row) for row in frame.itertuples()} for frame in frames]
    first = frames[0].iloc[0]
    print(f"{first.forks} forks x {first.rounds // first.forks} rounds per row, two runs one after the other\n")
    print(f"{'row':<44} {'statistic':<17} {'forks rsd 1':>11} {'forks rsd 2':>11} {'run 2 / run 1':>13}")
    found = []
    for name in runs[0]:
        for statistic, function in CANDIDATES.items():
            figures, spreads = [], []
            for run in runs:
                per_fork = [function(rounds) for rounds in run[name]]
                figures.append(statistics.fmean(per_fork))
                spreads.append(statistics.stdev(per_fork) / figures[-1])
            print(f"{name:<44} {statistic:<17} {spreads[0]:>11.2%} {spreads[1]:>11.2%} {figures[1] / figures[0]:>13.4f}")
            found.append({"row": name, "statistic": statistic, "forks_rsd": spreads, "run_2_over_run_1": figures[1] / figures[0]})
    _common.save(args, {"forks": int(first.forks), "rounds_per_fork": int(first.rounds // first.forks), "rows": found})


if __name__ == "__main__":
    main()
