"""Would a smaller first stage (3 forks instead of 4) help a run under a tight --total-time?

Under `compare --total-time 120` on this host the first stages alone (every job's first 4 forks)
fill the limit, so the rows end with the forks of their first stage. This script simulates rows
with the real stopping rule (Sampling.forks_planned) and the real statistics
(stats.summary.summarize): forks settle around a true value with a spread between forks, rounds spread
around their fork. For first stages of 3 and 4 forks it prints, over RUNS simulated rows each:

- unlimited: the share of intervals that cover the true value, the forks the rule ran, and the
  interval's mean half-width (relative);
- limited: the row stopped at its first stage, as a tight limit leaves it: its half-width and
  coverage, and what the first stage costs relative to 4 forks.

    python benchmarks/first_stage.py [between-fork spread %, default 3] [within-fork spread %, default 2]
"""
from __future__ import annotations

import random
import statistics

import _common

from jvmbridge.sampling.policy import Sampling
from jvmbridge.stats.summary import summarize

RUNS = 400
TRUE_NS = 100.0
MAX_FORKS = Sampling().fork_limit  # compare's default limit, the same for both first stages


def draw_fork(generator: random.Random, between: float, within: float, rounds: int) -> list[dict]:
    level = TRUE_NS * (1 + generator.gauss(0, between))
    return [{"iterations": 1000, "ns": 1000 * level * (1 + generator.gauss(0, within))} for _ in range(rounds)]


def simulated_rows(first_stage: int, between: float, within: float, stop_at_first_stage: bool, runs: int) -> list:
    sampling = Sampling(forks=first_stage, max_forks=MAX_FORKS)
    rows = []
    for seed in range(runs):
        generator = random.Random(seed)
        forks: list[list[dict]] = []
        while len(forks) < sampling.forks_planned(forks) and not (stop_at_first_stage and len(forks) >= first_stage):
            forks.append(draw_fork(generator, between, within, sampling.rounds))
        rows.append(summarize(forks, first_stage))
    return rows


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("between", nargs="?", type=float, default=3, help="spread between forks, %% (default 3)")
    parser.add_argument("within", nargs="?", type=float, default=2, help="spread of rounds inside a fork, %% (default 2)")
    args = parser.parse_args()
    _common.begin(args)
    between, within = args.between / 100, args.within / 100
    runs, samples = (20, 200) if args.quick else (RUNS, 5000)
    # What a fork's summary (the lower quartile of its rounds) averages to: the value to cover.
    generator = random.Random(0)
    truth = statistics.fmean(summarize([draw_fork(generator, 0.0, within, Sampling.rounds)]).figure_ns
                             for _ in range(samples))
    print(f"forks spread {between:.1%} between them, rounds {within:.1%} inside; {runs} rows each; "
          f"target ±{Sampling.target_error:.0%}, at most {MAX_FORKS} forks")
    print(f"{'first stage':>11}  {'unlimited: covered':>18}  {'forks':>5}  {'±':>6}  "
          f"{'stopped at it: covered':>22}  {'±':>6}  {'its cost':>8}")
    figures = []
    for first_stage in (3, 4):
        free = simulated_rows(first_stage, between, within, False, runs)
        held = simulated_rows(first_stage, between, within, True, runs)

        def covered(rows: list) -> float:
            return sum(abs(row.figure_ns - truth) <= row.error_ns for row in rows) / len(rows)

        print(f"{first_stage:>11}  {covered(free):>18.1%}  {statistics.fmean(r.forks for r in free):>5.1f}  "
              f"{statistics.fmean(r.relative_error for r in free):>6.2%}  {covered(held):>22.1%}  "
              f"{statistics.fmean(r.relative_error for r in held):>6.2%}  {first_stage / 4:>8.0%}")
        figures.append({"first_stage": first_stage, "unlimited_covered": covered(free),
                        "unlimited_forks": statistics.fmean(r.forks for r in free),
                        "unlimited_relative_error": statistics.fmean(r.relative_error for r in free),
                        "stopped_covered": covered(held),
                        "stopped_relative_error": statistics.fmean(r.relative_error for r in held),
                        "cost_against_4": first_stage / 4})
    _common.save(args, {"between": between, "within": within, "rows_each": runs, "first_stages": figures})


if __name__ == "__main__":
    main()
