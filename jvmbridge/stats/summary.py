"""Summaries of timed rounds with the fork (a fresh process) as the unit (Kalibera & Jones, ISMM
2013): rounds in one fork share its JIT decisions and layout, so they are not independent.

Disturbed rounds stay in the record, out of the figure; a fork's figure is FORK_STATISTIC of the
rest (docs/decisions/0001-the-fork-is-the-unit.md); the row's interval is Student's t over forks,
never narrower than Stein's from the first stage. JMH's pooled Score ± Error is kept beside."""
from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

from jvmbridge.stats.steady import STEADY_ROUNDS, Steadiness, classify

CONFIDENCE = 0.95
FORK_STATISTIC = "lower quartile"  # of a fork's undisturbed rounds (docs/decisions/0001-the-fork-is-the-unit.md)
JMH_CONFIDENCE = 0.999  # JMH's level, for its pooled Score ± Error
# Share of wall time lost to other threads, processes or the host that makes a round disturbed.
DISTURBED_SHARE = 0.02
# Relative standard deviation of rounds inside a fork above which a figure is noisy.
NOISY_RSD = 0.05
# Fewer forks make an interval too wide to mean much (t(0.975, 1) = 12.7).
FEW_FORKS = 3
# Levels: sorted neighbours further apart than this share and LEVEL_SPREADS in-fork spreads, at
# least LEVEL_FORKS forks each (one fork apart is as likely noise).
LEVEL_GAP = 0.03
LEVEL_SPREADS = 4.0
LEVEL_FORKS = 2


@dataclass(frozen=True)
class Level:
    ns_per_op: float  # the mean of its forks' summaries
    forks: int

    def as_dict(self) -> dict:
        return {"ns_per_op": self.ns_per_op, "forks": self.forks}


@dataclass(frozen=True)
class Summary:
    figure_ns: float  # the mean over forks of each fork's FORK_STATISTIC
    error_ns: float  # half-width of its CONFIDENCE interval over forks; inf with fewer than 2 forks
    fork_ns: tuple[float, ...]  # each fork's summary, in run order (forks with no undisturbed round left out)
    fork_of: tuple[int, ...]  # which fork (0, 1, ...) each of fork_ns summarises; () when every round was set aside
    min_ns: float  # over the undisturbed rounds
    max_ns: float
    # Pooled relative spread of rounds inside forks; None (not 0) where no fork has two rounds.
    rsd: float | None
    jmh_score_ns: float  # JMH's Score: the mean of every round of every fork, disturbed or not
    jmh_error_ns: float  # JMH's Error: t(0.9995, N - 1) s / sqrt(N) over those rounds; inf with one
    rounds: int  # every round of every fork
    forks: int  # forks run
    iterations: int
    per_round_ns: tuple[float, ...]  # ns/op of each round, in run order
    round_iterations: tuple[int, ...]  # messages in each round
    round_fork: tuple[int, ...]  # which fork (0, 1, ...; an interleaved row: the conductor's) each round ran in
    round_lost_share: tuple[float, ...]  # per round: share of its wall time lost to other work (0: none seen)
    levels: tuple[Level, ...]  # empty, or two or more
    round_counters: tuple[dict, ...]  # per round, what else was read around it (cpu_ns, wait_ns, gc_ms, ...)
    set_aside: tuple[str, ...]  # per round: "" (in the figure), "disturbed", or "warm-up" (before its fork settled)
    steadiness: tuple[Steadiness, ...]  # per fork where its warm-up was recorded (jvmbridge.stats.steady); else ()
    first_stage: int  # how many of fork_ns decided how many forks ran (their Stein interval bounds error_ns); 0: none

    @property
    def noisy(self) -> bool:
        return self.rsd is not None and self.rsd > NOISY_RSD

    @property
    def relative_error(self) -> float:
        return self.error_ns / self.figure_ns

    @property
    def disturbed_rounds(self) -> int:
        return self.set_aside.count("disturbed")

    @property
    def warmup_rounds(self) -> int:
        return self.set_aside.count("warm-up")

    @property
    def few_forks(self) -> bool:
        return len(self.fork_ns) < FEW_FORKS


def lost_share(round_: dict) -> float:
    """Share of a round's wall time lost to the run queue or steal; 0 where neither was measured."""
    return (round_.get("wait_ns", 0) + round_.get("steal_ns", 0)) / max(round_["ns"], 1)


def disturbed(round_: dict) -> bool:
    """Whether a round lost more than DISTURBED_SHARE of its wall time to other work."""
    return lost_share(round_) > DISTURBED_SHARE


def fork_summary(per_op: list[float]) -> float:
    """FORK_STATISTIC of one fork's undisturbed rounds (ns/op): noise only slows rounds, and the
    lower quartile varied least between forks (docs/decisions/0001-the-fork-is-the-unit.md)."""
    return low_quantile(per_op, 4)


def low_quantile(values: Sequence[float], n: int) -> float:
    """The first of ``n`` quantiles of ``values``, linear as numpy's default; a lone value itself."""
    return statistics.quantiles(values, n=n, method="inclusive")[0] if len(values) > 1 else values[0]


def summarize(forks: list[list[dict]], first_stage: int | None = None,
              warmups: list[list[float]] | None = None) -> Summary:
    """``forks``: each fork's rounds; ``first_stage``: forks whose Stein interval bounds the row's."""
    every = list(chain.from_iterable(forks))
    per_fork = [[r["ns"] / r["iterations"] for r in rounds] for rounds in forks]  # ns/op of each round
    per_op = list(chain.from_iterable(per_fork))
    lost = [lost_share(r) for r in every]
    steadiness, reasons = _set_aside(forks, per_fork, warmups)
    fork_of, kept = _kept(per_fork, reasons, per_op, lost)
    fork_ns = [fork_summary(fork) for fork in kept]
    error, stage = _interval(fork_ns, first_stage)
    return Summary(
        figure_ns=statistics.fmean(fork_ns), error_ns=error, fork_ns=tuple(fork_ns), fork_of=fork_of,
        min_ns=min(map(min, kept)), max_ns=max(map(max, kept)), rsd=within_fork_rsd(kept),
        jmh_score_ns=statistics.fmean(per_op), jmh_error_ns=_jmh_error(per_op),
        rounds=len(every), forks=len(forks), iterations=sum(r["iterations"] for r in every),
        per_round_ns=tuple(per_op), round_iterations=tuple(r["iterations"] for r in every),
        round_fork=tuple(i for i, rounds in enumerate(forks) for _ in rounds), round_lost_share=tuple(lost),
        levels=levels(fork_ns, robust_within_rsd(kept)),
        round_counters=tuple(map(_counters, every)),
        set_aside=tuple(chain.from_iterable(reasons)), steadiness=tuple(steadiness), first_stage=stage)


def _counters(round_: dict) -> dict:
    """The round's counters beyond iterations and time (cpu_ns, wait_ns, gc_ms, ...)."""
    return {k: v for k, v in round_.items() if k not in ("iterations", "ns")}


def _set_aside(forks: list[list[dict]], per_fork: list[list[float]],
               warmups: list[list[float]] | None) -> tuple[list[Steadiness], list[list[str]]]:
    """Where each fork settled, and why each round is out of its summary: "warm-up", "disturbed" or ""."""
    steadiness, reasons = [], []
    for index, (rounds, own) in enumerate(zip(forks, per_fork)):
        settled = classify(warmups[index], own) if warmups is not None and len(own) >= STEADY_ROUNDS else None
        if settled:
            steadiness.append(settled.kind)
        reasons.append(["warm-up" if settled and i < settled.first_round else "disturbed" if disturbed(round_)
                        else "" for i, round_ in enumerate(rounds)])
    return steadiness, reasons


def _kept(per_fork: list[list[float]], reasons: list[list[str]], per_op: list[float],
          lost: list[float]) -> tuple[tuple[int, ...], list[list[float]]]:
    """Which forks kept rounds for their summary, and the ns/op of those rounds, fork by fork."""
    kept = [[value for value, reason in zip(own, why) if not reason] for own, why in zip(per_fork, reasons)]
    fork_of = tuple(index for index, fork in enumerate(kept) if fork)
    kept = [fork for fork in kept if fork]
    # every round set aside: the figure is the least disturbed rounds' own, of no one fork
    return fork_of, kept or [_least_lost(per_op, lost)]


def _least_lost(per_op: list[float], lost: list[float]) -> list[float]:
    """The ns/op of the rounds that lost the least of their time, whatever their fork."""
    return [value for value, share in zip(per_op, lost) if share == min(lost)]


def _interval(fork_ns: list[float], first_stage: int | None) -> tuple[float, int]:
    """The CONFIDENCE half-width over forks, at least the first stage's Stein one; that stage's size."""
    error = half_width(statistics.stdev(fork_ns), len(fork_ns)) if len(fork_ns) > 1 else math.inf
    stage = first_stage if first_stage and 1 < first_stage < len(fork_ns) else 0
    if stage:
        error = max(error, stein_half_width(fork_ns[:stage], len(fork_ns)))
    return error, stage


def _jmh_error(per_op: list[float]) -> float:
    """JMH's Error over every round, pooled; inf with one."""
    return half_width(statistics.stdev(per_op), len(per_op), JMH_CONFIDENCE) if len(per_op) > 1 else math.inf


def within_fork_rsd(forks: list[list[float]]) -> float | None:
    """Pooled relative standard deviation of rounds inside forks; None where no fork has two."""
    squares = sum((value - statistics.fmean(fork)) ** 2 for fork in forks for value in fork)
    freedom = sum(len(fork) - 1 for fork in forks)
    mean = statistics.fmean([value for fork in forks for value in fork])
    return math.sqrt(squares / freedom) / mean if freedom else None


def robust_within_rsd(forks: list[list[float]]) -> float:
    """Median over forks of each fork's scaled MAD over its median: a spread spikes do not inflate."""
    spreads = [1.4826 * statistics.median([abs(v - statistics.median(fork)) for v in fork]) / statistics.median(fork)
               for fork in forks if len(fork) > 1]
    return statistics.median(spreads) if spreads else 0.0


def levels(fork_ns: list[float], within_rsd: float) -> tuple[Level, ...]:
    """Groups of fork summaries apart by LEVEL_GAP and LEVEL_SPREADS, LEVEL_FORKS each; () otherwise."""
    if len(fork_ns) < 2:
        return ()
    gap = max(LEVEL_GAP, LEVEL_SPREADS * within_rsd) * statistics.fmean(fork_ns)
    ordered = sorted(fork_ns)
    groups = [[ordered[0]]]
    for value in ordered[1:]:
        if value - groups[-1][-1] > gap:
            groups.append([])
        groups[-1].append(value)
    if len(groups) < 2 or min(map(len, groups)) < LEVEL_FORKS:
        return ()
    return tuple(Level(ns_per_op=statistics.fmean(group), forks=len(group)) for group in groups)


def paired_log_half_width(ratios: list[float]) -> float:
    """CONFIDENCE half-width of the mean log of per-fork ratios (Student's t over pairs): a host that
    slowed both sides of a fork moves neither. inf with fewer than two."""
    if len(ratios) < 2:
        return math.inf
    logs = [math.log(ratio) for ratio in ratios]
    return half_width(statistics.stdev(logs), len(logs))


def stein_half_width(first: list[float], forks: int) -> float:
    """Stein's interval for ``forks`` samples whose count the ``first`` chose."""
    return t_quantile(1 - (1 - CONFIDENCE) / 2, len(first) - 1) * statistics.stdev(first) / math.sqrt(forks)


def half_width(stdev: float, samples: int, confidence: float = CONFIDENCE) -> float:
    """Half-width for the mean of ``samples`` with this stdev (relative): t x stdev / sqrt(samples)."""
    return t_quantile(1 - (1 - confidence) / 2, samples - 1) * stdev / math.sqrt(samples)


@functools.lru_cache(maxsize=256)  # a stopping rule asks for the same few quantiles again and again
def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with df degrees of freedom."""
    from scipy.special import stdtrit  # 0.2 s to import: only where an interval is computed

    return float(stdtrit(df, p))
