"""Would another figure of a ratio, more forks or a larger first stage reach ±2% in the default
compare? From long saved runs (`compare --forks 40`), each ratio's forks (every one: host
episodes among them) are drawn again in random orders as the default's rule would meet them (a
first stage, Stein's count for ±2%, at most a limit, none past four times it), and two figures
are judged, each against its own value over all of the long run's forks:

- the mean of the forks' log ratios with Student's t, never narrower than Stein's (compare's);
- a 20% trimmed mean of them with Yuen's interval, its count where Yuen's half-width at the
  first stage's winsorized spread reaches ±2% (no Stein floor: less moved by a fork at a level of
  its own).

TRIED lists the ways: compare's, five forks at 16, 24 and 32 forks, and first stages of 5 to 8 at
the limits this machine's 90 s leave them; every way meets the same orders. Per ratio (compare's
way): how often the interval covers that value, how often it is within ±2%, and the forks it took;
per run and way, how often every ratio is within ±2% at once (the forks met in one order for all,
as a run meets them). The draws know no time limit, forks from one run understate the hour's
spread, and the value judged against includes the forks drawn (more so the more are drawn):
compare the ways with each other, not with the target.

    python benchmarks/fork_budget.py RUN.jsonl [RUN.jsonl ...]     (--quick: a tiny run of its own)
"""
from __future__ import annotations

import math
import random
import statistics

import _common

from jvmbridge.comparison.ratios import paired_slices_by_fork, ratio_rows
from jvmbridge.sampling.policy import FORK_LIMIT, FORKS, OUT_OF_REACH, TARGET_ERROR, forks_to_reach
from jvmbridge.stats.summary import CONFIDENCE, t_quantile

TRIM = 0.2  # Wilcox's usual share cut from each end
COMPARE = ("mean", FORKS, FORK_LIMIT)  # (figure, first stage, fork limit) as compare runs them
# The others: five forks with either figure and more forks, and first stages of 5 to 8 at the limits
# this machine's 90 s leave them (forks of 7 s for all rows, 3-4 s for fewer).
TRIED = tuple(dict.fromkeys((COMPARE, ("mean", 5, 16), ("trimmed", 5, 16), ("mean", 5, 24), ("mean", 5, 32),
                             ("mean", 5, 18), ("mean", 6, 17), ("mean", 7, 16), ("mean", 8, 15))))
LARGEST_STAGE = max(stage for _, stage, _ in TRIED)
DRAWS = 2000
QUANTILE = 1 - (1 - CONFIDENCE) / 2


def trimmed(logs: list[float]) -> float:
    ordered, cut = sorted(logs), int(TRIM * len(logs))
    return statistics.fmean(ordered[cut:len(ordered) - cut])


def yuen_half(logs: list[float]) -> float:
    """Yuen's half-width of the trimmed mean from the winsorized spread."""
    return _yuen(_winsorized_sd(logs), len(logs))


def _yuen(winsorized_sd: float, n: int) -> float:
    kept = n - 2 * int(TRIM * n)
    return t_quantile(QUANTILE, kept - 1) * math.sqrt((n - 1) * winsorized_sd ** 2 / (kept * (kept - 1)))


def _winsorized_sd(logs: list[float]) -> float:
    ordered, cut = sorted(logs), int(TRIM * len(logs))
    middle = ordered[cut:len(ordered) - cut]
    return statistics.stdev([middle[0]] * cut + middle + [middle[-1]] * cut)


def trimmed_need(first: list[float], target: float) -> int:
    """The forks at which Yuen's half-width with the first stage's winsorized spread reaches ``target``."""
    spread = _winsorized_sd(first)
    return next((n for n in range(len(first), 1000) if _yuen(spread, n) <= target), 1000)


def drawn(order: list[float], figure: str, stage: int, limit: int) -> tuple[float, float, int]:
    """The default's rule, a first stage of ``stage``, at most ``limit`` forks, over a ratio's forks
    met in ``order``: (figure, half-width, forks taken)."""
    first, target = order[:stage], math.log1p(TARGET_ERROR)
    if figure == "mean":
        need = forks_to_reach([math.exp(x) for x in first], TARGET_ERROR) or stage
    else:
        need = trimmed_need(first, target)
    taken = order[:stage if need > OUT_OF_REACH * limit else min(need, limit, len(order))]
    if figure == "trimmed":
        return trimmed(taken), yuen_half(taken), len(taken)
    t = t_quantile(QUANTILE, len(taken) - 1) * statistics.stdev(taken) / math.sqrt(len(taken))
    stein = t_quantile(QUANTILE, stage - 1) * statistics.stdev(first) / math.sqrt(len(taken))
    return statistics.fmean(taken), max(t, stein), len(taken)


def judged(ratios: dict[str, dict[int, float]], tried: tuple[str, int, int], orders: list[list[int]]) -> dict:
    """Per ratio (label -> fork -> log ratio) how often its interval covers its value over all forks,
    is within ±2%, and its forks; and how often every ratio of the run is within ±2% at once (the
    forks met in each of ``orders``, every ratio in the same, as one run meets them)."""
    figure, stage, limit = tried
    value = {label: (statistics.fmean if figure == "mean" else trimmed)(list(logs.values()))
             for label, logs in ratios.items()}
    runs = [{label: drawn([logs[n] for n in order if n in logs], figure, stage, limit) for label, logs in ratios.items()}
            for order in orders]
    target = math.log1p(TARGET_ERROR)
    return {"every_ratio_within": statistics.fmean(all(half <= target for _, half, _ in run.values()) for run in runs),
            "ratios": {label: {"covers": statistics.fmean(abs(run[label][0] - value[label]) <= run[label][1] for run in runs),
                               "within": statistics.fmean(run[label][1] <= target for run in runs),
                               "forks": statistics.fmean(run[label][2] for run in runs)} for label in ratios}}


def main() -> None:
    args, runs = _common.saved_runs(__doc__, forks=LARGEST_STAGE + 1)
    rng, draws = random.Random(7), 50 if args.quick else DRAWS
    figures: dict[str, dict] = {}
    for name, frame in runs.items():
        ratios = {f"{ratio.label}, {ratio.accelerator}": {n: math.log(r) for n, r in paired_slices_by_fork(slower, faster)}
                  for ratio, faster, slower in ratio_rows(frame)}
        ratios = {label: logs for label, logs in ratios.items() if len(logs) > LARGEST_STAGE}
        if not ratios:
            print(f"{name}: no ratio of more forks than the largest first stage tried")
            continue
        numbers = sorted({number for logs in ratios.values() for number in logs})
        orders = [rng.sample(numbers, len(numbers)) for _ in range(draws)]  # the same for every way: paired
        figures[name] = {_key(tried): judged(ratios, tried, orders) for tried in TRIED}
        print(f"\n{name}, compare's rule ({_key(COMPARE)})\n{'ratio':60} {'covers':>7} {'±2%':>5} {'forks':>5}")
        for label, found in figures[name][_key(COMPARE)]["ratios"].items():
            print(f"{label[:60]:60} {found['covers']:7.0%} {found['within']:5.0%} {found['forks']:5.1f}")
    print(f"\n{'figure':>8} {'first':>5} {'limit':>5} {'covers':>7} {'±2%':>5} {'forks':>5}  "
          "every ratio of a run within ±2% at once")
    for tried in TRIED:
        per_run = [found[_key(tried)] for found in figures.values()]
        each = [r for found in per_run for r in found["ratios"].values()]
        if each:
            print(f"{tried[0]:>8} {tried[1]:5d} {tried[2]:5d} {statistics.fmean(r['covers'] for r in each):7.1%} "
                  f"{statistics.fmean(r['within'] for r in each):5.0%} {statistics.fmean(r['forks'] for r in each):5.1f}  "
                  + ", ".join(f"{found['every_ratio_within']:.0%}" for found in per_run))
    _common.save(args, figures)


def _key(tried: tuple[str, int, int]) -> str:
    figure, stage, limit = tried
    return f"{figure}, first {stage}, at most {limit}"


if __name__ == "__main__":
    main()
