"""How many rounds per fork? Kalibera & Jones' answer from the variance components and costs
measured here (issue 25, item 6).

A row's figure is the mean of its forks' summaries (the lower quartile of each fork's rounds). Its
variance over n forks of r rounds is (s_b^2 + w^2 / r) / n: s_b^2 the variance between forks that no
number of rounds removes (JIT decisions, memory layout, the host), w^2 / r what r rounds of one fork
leave in its summary. Kalibera & Jones ("Rigorous Benchmarking in Reasonable Time", ISMM 2013)
minimise the time for a given variance: r* = sqrt(c_fork / c_round * w^2 / s_b^2), with c_fork what a
fork costs beyond its rounds (start-up and warm-up) and c_round what a round costs.

Per row of one fresh `compare` (defaults, or the options given, as on the command line):
- w^2 from the data, not from a model of the noise: each fork's rounds resampled (bootstrap), the
  variance of their lower quartile, times r (one-sided noise makes the quartile's variance smaller
  than a normal's);
- s_b^2 = the fork summaries' variance less w^2 / r (0 where the rounds explain it all);
- c_fork and c_round from the run itself: the wall time of each configuration's job (the progress
  callback), less its rounds, per fork; the round time as asked.
It prints r* and, since jvmbridge's first stage runs --forks forks (4) whatever the variances, the
rounds per fork that take the least time once at least that many forks run: the forks and seconds
±2% takes at r = --rounds and at that best r.

    python benchmarks/variance_components.py [compare options, e.g. --engine jvm --engine c-loop]
"""
from __future__ import annotations

import math
import random
import statistics
import sys
import time

from jvmbridge.api import run_comparison
from jvmbridge.comparison.request import CompareRequest
from jvmbridge.stats import CONFIDENCE, fork_summary, t_quantile
from jvmbridge.workload import Sampling

TARGET = 0.02
BOOTSTRAP = 400


def within_variance(forks: list[list[float]]) -> float:
    """w^2: the variance one round leaves in a fork's summary (bootstrap over each fork's rounds, x r)."""
    draw = random.Random(0)
    per_fork = []
    for rounds in forks:
        if len(rounds) < 2:
            continue
        summaries = [fork_summary([draw.choice(rounds) for _ in rounds]) for _ in range(BOOTSTRAP)]
        per_fork.append(statistics.variance(summaries) * len(rounds))
    return statistics.fmean(per_fork) if per_fork else 0.0


def cost(rounds: int, between: float, within: float, t: float, c_fork: float, c_round: float,
         fewest: int) -> tuple[int, float]:
    """Forks of ``rounds`` rounds (at least ``fewest``) that bring the interval within ±TARGET, and
    the seconds they take."""
    forks = max(fewest, math.ceil((between + within / rounds) * (t / TARGET) ** 2))
    return forks, forks * (c_fork + rounds * c_round)


def main() -> None:
    from jvmbridge.cli.compare import compare as command

    context = command.make_context("compare", sys.argv[1:])
    options = {k: v for k, v in context.params.items()
               if k not in ("java_paths", "output", "output_format", "jmh_columns", "quiet", "host_name")}
    request = CompareRequest(java=context.params["java_paths"], **options)
    starts: list[tuple[str, float]] = []
    begun = time.perf_counter()
    comparison = run_comparison(request, progress=lambda index, total, label, elapsed: starts.append((label, elapsed)))
    ended = time.perf_counter() - begun
    job_seconds = [(later if later is not None else ended) - at
                   for (_, at), later in zip(starts, [s for _, s in starts[1:]] + [None])]
    print(f"target ±{TARGET:.0%} at {CONFIDENCE:.0%}; w: one round's share of a fork summary's spread; "
          "s_b: between forks; c_fork: a fork's cost beyond its rounds\n")
    fewest = request.forks or Sampling.forks  # the first stage
    print(f"{'row':<52} {'w':>6} {'s_b':>6} {'c_fork':>7} {'KJ r*':>6} {'r':>3} {'forks':>5} {'s':>6} "
          f"{'best r':>6} {'forks':>5} {'s':>6}")
    # A job measures one configuration (one row) in every workload run here.
    for row, seconds in zip(comparison.results, job_seconds):
        per_fork = row.rounds // row.forks
        forks: list[list[float]] = [[] for _ in range(row.forks)]
        for fork, ns, aside in zip(row.round_fork, row.round_ns_per_op, row.round_set_aside):
            if not aside:
                forks[fork].append(ns / row.ns_per_op)  # relative: variances in (share of the figure)^2
        summaries = [s / row.ns_per_op for s in row.fork_ns_per_op]
        if len(summaries) < 2:
            continue
        w2 = within_variance(forks)
        b2 = max(0.0, statistics.variance(summaries) - w2 / per_fork)
        c_round = request.round_time if per_fork > 1 else 1.0  # openssl speed: runs of 1 s
        c_fork = max(0.0, seconds / row.forks - per_fork * c_round)
        kj = f"{math.sqrt(c_fork / c_round * w2 / b2):.1f}" if b2 > 0 else "inf"
        t = t_quantile(0.5 + CONFIDENCE / 2, max(1, row.forks - 1))
        choices = range(1, 3 * per_fork + 1) if per_fork > 1 else [1]  # openssl speed: a run is one round
        costs = {r: cost(r, b2, w2, t, c_fork, c_round, fewest) for r in choices}
        best = min(costs, key=lambda r: costs[r][1])
        (n_now, s_now), (n_best, s_best) = costs[per_fork], costs[best]
        name = f"{row.engine}, {row.setting}, {row.shape}"[:52]
        print(f"{name:<52} {math.sqrt(w2):>6.2%} {math.sqrt(b2):>6.2%} {c_fork:>6.1f}s {kj:>6} {per_fork:>3} "
              f"{n_now:>5} {s_now:>5.0f}s {best:>6} {n_best:>5} {s_best:>5.0f}s")
    print(f"\nwall time {ended:.0f} s; forks and seconds: what ±{TARGET:.0%} takes at the variances seen "
          f"(t of this run's forks; at least {fewest} forks, the first stage)")


if __name__ == "__main__":
    main()
