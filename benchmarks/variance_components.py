"""How many rounds per fork? Kalibera & Jones' answer from the variance components and costs
measured here.

A row's figure is the mean of its forks' summaries (the lower quartile of each fork's rounds). Its
variance over n forks of r rounds is (s_b^2 + w^2 / r) / n: s_b^2 the variance between forks that no
number of rounds removes (JIT decisions, memory layout, the host), w^2 / r what r rounds of one fork
leave in its summary. Kalibera & Jones ("Rigorous Benchmarking in Reasonable Time", ISMM 2013)
minimise the time for a given variance: r* = sqrt(c_fork / c_round * w^2 / s_b^2), with c_fork what a
fork costs beyond its rounds (start-up and warm-up) and c_round what a round costs.

Per row of one fresh `compare` (defaults, or the options given, as on the command line):
- w^2 from the data, not from a model of the noise: each fork's rounds resampled (bootstrap), the
  variance of their lower quartile, times r (one-sided noise makes the quartile's variance smaller
  than a normal's), as compare's own choice computes it (jvmbridge.comparison.dimensioning);
- s_b^2 = the fork summaries' variance less w^2 / r (0 where the rounds explain it all);
- c_fork and c_round from the run itself: each fork's share of its child's wall time, less its
  rounds; the rounds' own wall time.
It prints r* and, since jvmbridge's first stage runs --forks forks (4) whatever the variances, the
rounds per fork that take the least time once at least that many forks run: the forks and seconds
±2% takes at r = --rounds and at that best r.

    python benchmarks/variance_components.py [compare options, e.g. --engine jvm --engine c-loop]
"""
from __future__ import annotations

import math
import time
from dataclasses import fields, replace

import _common

from jvmbridge.api import run_comparison
from jvmbridge.comparison.dimensioning import row_components
from jvmbridge.comparison.request import CompareRequest, resolve_matrix
from jvmbridge.sampling.policy import MAX_FORKS
from jvmbridge.saved.schema import row_record
from jvmbridge.stats.summary import CONFIDENCE

TARGET = 0.02
# Quick mode's compare, unless options are given: the C loop, two forks (a spread between them) of two 10 ms rounds.
QUICK = ["--engine", "c-loop", "--rounds", "2", "--round-time", "0.01", "--forks", "2", "--max-forks", "2"]


def main() -> None:
    from jvmbridge.cli.compare import compare as command

    parser = _common.parser(__doc__)
    args, compare_options = parser.parse_known_args()  # the rest are compare's, read by its own parser
    _common.begin(args)
    _common.own_data_home()
    context = command.make_context("compare", compare_options or (QUICK if args.quick else []))
    # compare's own options under their own names, as the CLI passes them (not its output's: --format, --quiet, ...)
    accepted = {field.name for field in fields(CompareRequest) if field.init}
    options = {k: v for k, v in context.params.items() if k in accepted}
    request = CompareRequest(java=context.params["java_paths"], **options)
    # Forecasts up to the most forks Sampling allows, past the run's own limit.
    sampling = replace(request.workloads[0].sampling, target_error=TARGET, max_forks=MAX_FORKS)
    begun = time.perf_counter()
    comparison = run_comparison(request, resolve_matrix(request))
    ended = time.perf_counter() - begun
    print(f"target ±{TARGET:.0%} at {CONFIDENCE:.0%}; w: one round's share of a fork summary's spread; "
          "s_b: between forks; c_fork: a fork's cost beyond its rounds\n")
    print(f"{'row':<52} {'w':>6} {'s_b':>6} {'c_fork':>7} {'KJ r*':>6} {'r':>3} {'forks':>5} {'s':>6} "
          f"{'best r':>6} {'forks':>5} {'s':>6}")
    rows = []
    for row in comparison.results:
        found = row_components(row_record(row))
        if found is None:  # openssl speed: a fork of one round, nothing to choose
            continue
        per_fork = row.rounds // row.forks
        kj = (f"{math.sqrt(found.fork_seconds / found.round_seconds * found.within / found.between):.1f}"
              if found.between > 0 else "inf")
        costs = {r: found.forks_and_seconds(r, sampling) for r in range(1, 3 * per_fork + 1)}  # below compare's floor too
        best = min(costs, key=lambda r: costs[r][1])
        (n_now, s_now), (n_best, s_best) = costs[per_fork], costs[best]
        name = f"{row.engine}, {row.setting}, {row.shape}"[:52]
        print(f"{name:<52} {math.sqrt(found.within):>6.2%} {math.sqrt(found.between):>6.2%} "
              f"{found.fork_seconds:>6.1f}s {kj:>6} {per_fork:>3} {n_now:>5} {s_now:>5.0f}s {best:>6} {n_best:>5} "
              f"{s_best:>5.0f}s")
        rows.append({"row": name, "within": math.sqrt(found.within), "between": math.sqrt(found.between),
                     "fork_seconds": found.fork_seconds, "kalibera_jones_r": kj, "rounds": per_fork,
                     "forks": n_now, "seconds": s_now, "best_rounds": best, "best_forks": n_best,
                     "best_seconds": s_best})
    print(f"\nwall time {ended:.0f} s; forks and seconds: what ±{TARGET:.0%} takes at the variances seen "
          f"(Stein's t of the first stage; at least its {sampling.first_stage} forks)")
    _common.save(args, {"target": TARGET, "wall_seconds": ended, "rows": rows})


if __name__ == "__main__":
    main()
