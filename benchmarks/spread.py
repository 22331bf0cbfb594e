"""Issue 25's spread target: are the JVM's rows within 2x as noisy as native rows doing the same
shape of work, measured in one run? The JVM's per-message rows against the C loop's per-message
rows, the JVM's stream rows against `openssl speed`'s, at 38 B and 16 KiB, both settings.

Per row two spreads: of the rounds (median absolute deviation over the median, as the issue
measured before the fork became the unit), and of the fork summaries (their relative standard
deviation: what the figure's interval is made of).

    python benchmarks/spread.py [RUN.jsonl]   (default: a fresh compare, about 9 minutes, saved to spread.jsonl)
"""
from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

import _common

from jvmbridge.api import compare, load

PAIRS = {"message": "OpenSSL C loop (jvmbridge)", "stream": "OpenSSL speed (C loop)"}


def spreads(row) -> tuple[float, float]:
    rounds = list(row.round_ns_per_op)
    middle = statistics.median(rounds)
    mad = statistics.median(abs(value - middle) for value in rounds) / middle
    forks = list(row.fork_ns_per_op)
    return mad, (statistics.stdev(forks) / statistics.fmean(forks) if len(forks) > 1 else float("nan"))


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("run", nargs="?", type=Path, help="a saved run (default: a fresh compare)")
    args = parser.parse_args()
    _common.begin(args)
    if args.run:
        frame = load(args.run)
    elif args.quick:  # the message shape alone, one fork of two 10 ms rounds per row, saved nowhere
        with tempfile.TemporaryDirectory() as scratch:
            frame = compare(engine=["jvm", "c-loop"], sizes=[38], shape="message", forks=1, max_forks=1, rounds=2,
                            round_time=0.01, output=Path(scratch) / "spread.jsonl")
    else:
        frame = compare(engine=["jvm", "c-loop", "openssl-cli"], sizes=[38, 16384], shape=["message", "stream"],
                        output=Path("spread.jsonl"))
    rows = []
    print(f"{'row':<58} {'rounds MAD':>10} {'forks rsd':>9} {'forks':>5}   against its native kind")
    for row in frame[frame.engine == "JVM"].itertuples():
        native = frame[(frame.engine == PAIRS[row.shape]) & (frame.message_bytes == row.message_bytes)
                       & (frame.accelerated == row.accelerated) & (frame["shape"] == row.shape)]
        mad, fork_rsd = spreads(row)
        line = f"{f'JVM {row.setting}, {row.shape}, {row.message_bytes} B':<58} {mad:>10.2%} {fork_rsd:>9.2%} {row.forks:>5}"
        rows.append({"row": f"JVM {row.setting}, {row.shape}, {row.message_bytes} B", "rounds_mad": mad,
                     "forks_rsd": fork_rsd, "forks": row.forks, "native": []})
        for other in native.itertuples():
            other_mad, other_rsd = spreads(other)
            rows[-1]["native"].append({"engine": other.engine, "rounds_mad": other_mad, "forks_rsd": other_rsd,
                                       "forks": other.forks})
            line += (f"   {other.engine} {other_mad:.2%} / {other_rsd:.2%} ({other.forks} forks): "
                     f"{mad / other_mad if other_mad else float('inf'):.1f}x / {fork_rsd / other_rsd:.1f}x")
        print(line)
    _common.save(args, {"rows": rows})


if __name__ == "__main__":
    main()
