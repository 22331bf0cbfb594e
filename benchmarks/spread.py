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
import sys
from pathlib import Path

from jvmbridge.api import compare, load

PAIRS = {"message": "OpenSSL C loop (jvmbridge)", "stream": "OpenSSL speed (C loop)"}


def spreads(row) -> tuple[float, float]:
    rounds = list(row.round_ns_per_op)
    middle = statistics.median(rounds)
    mad = statistics.median(abs(value - middle) for value in rounds) / middle
    forks = list(row.fork_ns_per_op)
    return mad, (statistics.stdev(forks) / statistics.fmean(forks) if len(forks) > 1 else float("nan"))


def main() -> None:
    if len(sys.argv) > 1:
        frame = load(sys.argv[1])
    else:
        frame = compare(engine=["jvm", "c-loop", "openssl-cli"], sizes=[38, 16384], shape=["message", "stream"],
                        output=Path("spread.jsonl"))
    print(f"{'row':<58} {'rounds MAD':>10} {'forks rsd':>9} {'forks':>5}   against its native kind")
    for row in frame[frame.engine == "JVM"].itertuples():
        native = frame[(frame.engine == PAIRS[row.shape]) & (frame.message_bytes == row.message_bytes)
                       & (frame.accelerated == row.accelerated) & (frame["shape"] == row.shape)]
        mad, fork_rsd = spreads(row)
        line = f"{f'JVM {row.setting}, {row.shape}, {row.message_bytes} B':<58} {mad:>10.2%} {fork_rsd:>9.2%} {row.forks:>5}"
        for other in native.itertuples():
            other_mad, other_rsd = spreads(other)
            line += (f"   {other.engine} {other_mad:.2%} / {other_rsd:.2%} ({other.forks} forks): "
                     f"{mad / other_mad if other_mad else float('inf'):.1f}x / {fork_rsd / other_rsd:.1f}x")
        print(line)


if __name__ == "__main__":
    main()
