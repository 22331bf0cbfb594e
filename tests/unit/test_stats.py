"""The statistics with the fork as the unit: disturbed rounds set apart, the interval over forks,
levels, the stopping rule, and simulations of whole runs on a fake engine with a known true
value (the statistics and the stopping rule are real; only the rounds are drawn).

The true value a row estimates is what the same forks would give on a machine without the
interference: the mean over forks of each fork's lower quartile of rounds that vary only as
measurement does (symmetrically). A lower quartile of 4 such rounds sits about half a standard
deviation below their centre, so that is where the truth lies, computed below by drawing."""
from __future__ import annotations

import math
import random
import statistics

import pytest

from jvmbridge.sampling.policy import FORK_LIMIT, Sampling
from jvmbridge.stats.steady import Steadiness, Steady, classify
from jvmbridge.stats.summary import (
    CONFIDENCE,
    DISTURBED_SHARE,
    fork_summary,
    stein_half_width,
    summarize,
)

TRUE_NS = 100.0


def forks_planned(sampling: Sampling, forks: list, warmups: list | None = None) -> int:
    """The simulations' stopping rule, Stein's two stages on a row alone (the conductor's is on ratios):
    the first stage, then as many as its spread asks for within the target, up to the limit; as many
    as ran where they sit at levels."""
    first = sampling.first_stage
    if len(forks) < first:
        return first
    summary = summarize(forks[:first], warmups=warmups[:first] if warmups else None)
    if summary.levels:
        return first
    if len(summary.fork_ns) < 2:
        return sampling.fork_limit
    relative = stein_half_width(list(summary.fork_ns), 1) / summary.figure_ns
    return max(first, min(sampling.fork_limit, math.ceil((relative / sampling.target_error) ** 2)))


def wants_another(sampling: Sampling, forks: list) -> bool:
    """Whether a row alone gets another fork: fewer done than planned."""
    return len(forks) < forks_planned(sampling, forks)


def rounds(*ns: float, wait: float = 0.0) -> list[dict]:
    return [{"iterations": 1000, "ns": value * 1000, "wait_ns": wait * value * 1000} for value in ns]


def test_the_figure_is_the_mean_of_each_forks_lower_quartile_and_its_interval_is_over_forks():
    summary = summarize([rounds(100, 101, 140), rounds(102, 103, 104), rounds(98, 99, 97)])
    assert summary.fork_ns == (100.5, 102.5, 97.5)  # the 140 ns/op round does not move its fork's
    assert summary.figure_ns == pytest.approx(100.1667, rel=1e-4)
    # s of (100.5, 102.5, 97.5) = 2.517; t(0.975, 2) = 4.303; 4.303 x 2.517 / sqrt(3) = 6.25
    assert summary.error_ns == pytest.approx(6.253, rel=1e-3)
    assert CONFIDENCE == 0.95
    # JMH's pooled figures over every round stay beside: mean 104.9, s 13.36, t(0.9995, 8) = 5.041
    assert summary.jmh_score_ns == pytest.approx(104.889, rel=1e-4)
    assert summary.jmh_error_ns == pytest.approx(5.041 * 13.365 / 3, rel=1e-3)


def test_forks_of_one_round_have_no_spread_inside_a_fork_rather_than_none_at_all():
    # `openssl speed`'s forks are one run each: an rsd of 0 would say its rounds never varied.
    assert summarize([rounds(100), rounds(104), rounds(98)]).rsd is None
    assert not summarize([rounds(100), rounds(104), rounds(98)]).noisy
    assert summarize([rounds(100, 110), rounds(98)]).rsd == pytest.approx(statistics.stdev([100, 110]) / 102.667, rel=1e-3)


def test_a_disturbed_round_is_kept_in_the_record_and_out_of_the_figure():
    quiet = rounds(100, 100.5, 99.5)
    disturbed = rounds(150, wait=0.33)  # a third of its wall time waiting for a CPU
    summary = summarize([quiet + disturbed, rounds(100, 101, 99)])
    assert summary.rounds == 7 and summary.per_round_ns[3] == 150
    assert summary.disturbed_rounds == 1 and summary.round_lost_share[3] == pytest.approx(0.33)
    assert summary.fork_ns == (99.75, 99.5) and summary.max_ns == 101
    assert summary.round_counters[3]["wait_ns"] == pytest.approx(0.33 * 150_000)
    assert summarize([rounds(100, wait=DISTURBED_SHARE)]).disturbed_rounds == 0  # the share itself is within


def test_a_fork_with_every_round_disturbed_has_no_summary_of_its_own():
    summary = summarize([rounds(100, 100, 100), rounds(180, 190, wait=0.5), rounds(101, 101, 101)])
    assert summary.fork_ns == (100, 101) and summary.forks == 3
    assert summary.fork_of == (0, 2)  # which forks those are: the turns they pair by (ratios)
    assert summarize([rounds(180, 190, wait=0.5)]).fork_of == ()  # the least disturbed rounds, of no one fork


def test_forks_at_distinct_speeds_are_levels_and_stop_the_search_for_a_narrow_interval():
    forks = [rounds(52.8, 53.0, 52.6), rounds(68.1, 68.0, 68.3), rounds(52.9, 52.7, 53.1), rounds(68.4, 68.3, 68.2)]
    summary = summarize(forks)
    assert [(round(level.ns_per_op, 2), level.forks) for level in summary.levels] == [(52.75, 2), (68.15, 2)]
    assert not wants_another(Sampling(forks=4, max_forks=10), forks)
    # One fork apart is not a level of its own (it may have met more noise): the search goes on.
    assert summarize(forks[:3]).levels == () and wants_another(Sampling(forks=3, max_forks=10), forks[:3])
    assert summarize([rounds(100, 101, 99), rounds(101, 102, 100), rounds(99, 100, 98)]).levels == ()


def test_a_wide_spread_inside_forks_is_not_mistaken_for_levels():
    # Rounds spread +-6% inside each fork: fork medians 3.5% apart are within what the rounds show.
    summary = summarize([rounds(94, 100, 106, 97, 103), rounds(97.5, 103.5, 109.5, 100.5, 106.5)])
    assert summary.levels == ()


def test_the_forks_the_first_stage_asks_for_and_no_more():
    assert Sampling().fork_limit == FORK_LIMIT and Sampling(forks=20).fork_limit == 20  # up to the limit, or --forks
    assert Sampling(iterations=10**8, forks=1).fork_limit == 1  # AESNITester's fixed work
    # Three forks 2.5% apart: Stein's interval t(0.975, 2) 4.303 x 2.5% / sqrt(N) is within 2% from N = 29.
    wide = [rounds(100, 100), rounds(102.5, 102.5), rounds(97.5, 97.5)]
    assert wants_another(Sampling(forks=3), wide) and not wants_another(Sampling(forks=3, max_forks=3), wide)
    assert not wants_another(Sampling(forks=3, target_error=0.07), wide)
    assert wants_another(Sampling(forks=3), wide[:2])  # fewer than --forks
    # One fork shows no spread: two decide, and their Stein interval is what summarize bounds by.
    assert Sampling(forks=1).first_stage == 2 and Sampling(forks=1, max_forks=1).first_stage == 1
    # The count is the first three forks' to decide: later ones do not move it, narrow or wide.
    steady = [rounds(100, 100)]
    assert wants_another(Sampling(forks=3, max_forks=40), wide + steady * 25)
    assert not wants_another(Sampling(forks=3, max_forks=40), wide + steady * 26)


# Simulated runs: a fake engine's forks, drawn from a model with a known true value, measured by
# the real stopping rule until it stops, then summarised by the real statistics.
RUNS = 400
SAMPLING = Sampling()  # compare's defaults


def simulate(draw_fork, seed: int, sampling: Sampling = SAMPLING):
    generator = random.Random(seed)
    forks: list[list[dict]] = []
    while wants_another(sampling, forks):
        forks.append(draw_fork(generator, len(forks)))
    return summarize(forks, sampling.forks)


def clean_truth(spread: float) -> float:
    """The expected fork summary when rounds spread ``spread`` (relative, Gaussian) around TRUE_NS."""
    generator = random.Random(0)
    return statistics.fmean(fork_summary([TRUE_NS * (1 + generator.gauss(0, spread)) for _ in range(SAMPLING.rounds)])
                            for _ in range(20000))


def covered(summary, truth: float) -> bool:
    return abs(summary.figure_ns - truth) <= summary.error_ns


def least_coverage(runs: int) -> float:
    """The coverage a CONFIDENCE interval may show over ``runs`` runs by chance (two standard errors below)."""
    return CONFIDENCE - 2 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / runs)


def gaussian(generator: random.Random, fork: int) -> list[dict]:
    """(a) each fork settles near the true value (1% between forks), rounds spread 2% around it."""
    level = TRUE_NS * (1 + generator.gauss(0, 0.01))
    return rounds(*(level * (1 + generator.gauss(0, 0.02)) for _ in range(SAMPLING.rounds)))


def spiky(generator: random.Random, fork: int) -> list[dict]:
    """(b) the noise seen here: most rounds within a percent of their fork's speed, the rest only
    ever slower: a fifth 7-30% slower with no counter to show why (the host), one in twenty 2.37x
    as slow while the thread waited for a CPU."""
    level = TRUE_NS * (1 + generator.gauss(0, 0.01))
    drawn = []
    for _ in range(SAMPLING.rounds):
        clean = level * (1 + generator.gauss(0, 0.01))
        chance = generator.random()
        if chance < 0.05:
            drawn += rounds(clean * 2.37, wait=1 - 1 / 2.37)
        else:
            drawn += rounds(clean * (1 + generator.uniform(0.07, 0.3)) if chance < 0.25 else clean)
    return drawn


@pytest.mark.parametrize("model, spread", [(gaussian, 0.02), (spiky, 0.01)])
def test_the_interval_covers_the_true_value_at_its_confidence(model, spread):
    truth = clean_truth(spread)
    summaries = [simulate(model, seed) for seed in range(RUNS)]
    coverage = sum(covered(summary, truth) for summary in summaries) / RUNS
    assert coverage >= least_coverage(RUNS), f"{coverage:.1%} of {RUNS} intervals covered {truth:.2f}"
    assert sum(not s.levels for s in summaries) >= 0.95 * RUNS  # nor are levels made up


def two_levels(generator: random.Random, fork: int) -> list[dict]:
    """(c) forks settle at 100 or at 125 ns/op (JIT or memory-layout luck), rounds 1% around them;
    the first two forks fall one on each, so each run has both to find."""
    high = fork == 1 or (fork > 1 and generator.random() < 0.5)
    level = TRUE_NS * (1.25 if high else 1.0) * (1 + generator.gauss(0, 0.005))
    return rounds(*(level * (1 + generator.gauss(0, 0.01)) for _ in range(SAMPLING.rounds)))


def test_two_levels_are_reported_as_two_levels():
    summaries = [simulate(two_levels, seed) for seed in range(RUNS)]
    found = [s for s in summaries if len(s.levels) == 2]
    assert len(found) >= 0.95 * RUNS
    for s in found:
        assert s.levels[0].ns_per_op == pytest.approx(100, rel=0.04) and s.levels[1].ns_per_op == pytest.approx(125, rel=0.04)
        assert sum(level.forks for level in s.levels) == len(s.fork_ns)


def late_jit(generator: random.Random, fork: int) -> tuple[list[float], list[dict]]:
    """(d) a slow warm-up drift, then the JIT's last compilation landing late: in the warm-up's
    last chunks or during the first three timed rounds (the warm-up's chunks agreed too soon)."""
    level = TRUE_NS * (1 + generator.gauss(0, 0.01))
    step = generator.randrange(14, 20 + SAMPLING.rounds - 1)

    def speed(t: int) -> float:
        return level * ((1.3 - 0.01 * t) if t < step else 1.0)

    chunks = [speed(t) * (1 + generator.gauss(0, 0.02)) for t in range(20)]
    return chunks, rounds(*(speed(20 + i) * (1 + generator.gauss(0, 0.01)) for i in range(SAMPLING.rounds)))


def test_a_fork_still_warming_up_in_its_rounds_has_them_set_aside_and_the_interval_covers():
    truth, summaries, runs = clean_truth(0.01), [], RUNS // 2  # each fork's change points take milliseconds
    for seed in range(runs):
        generator, forks, warmups = random.Random(seed), [], []
        while len(forks) < forks_planned(SAMPLING, forks, warmups):
            chunks, drawn = late_jit(generator, len(forks))
            forks.append(drawn)
            warmups.append(chunks)
        summaries.append(summarize(forks, SAMPLING.forks, warmups))
    coverage = sum(covered(summary, truth) for summary in summaries) / runs
    assert coverage >= least_coverage(runs), f"{coverage:.1%} of {runs} intervals covered {truth:.2f}"
    assert sum(s.warmup_rounds for s in summaries) > runs  # the slow rounds were found, not just outvoted
    kinds = [kind for s in summaries for kind in s.steadiness]  # sped up, whether or not rounds were left to settle
    assert sum(kind in (Steadiness.WARMUP, Steadiness.NO_STEADY_STATE) for kind in kinds) >= 0.99 * len(kinds)


@pytest.mark.parametrize("chunks, rounds_ns, kind, first_round", [
    ([100.0, 101, 99, 100, 100.5, 99.5, 100, 101], [100.0, 100.5, 99.5, 100], Steadiness.FLAT, 0),
    ([300.0, 290, 310, 120, 118, 122, 101, 100, 99, 100], [100.0, 101, 99, 100], Steadiness.WARMUP, 0),
    ([100.0, 99, 101, 100, 100, 99, 101, 100], [100.0, 120, 121, 119], Steadiness.SLOWDOWN, 1),
    ([100.0, 99, 101, 100, 100, 99, 101, 100], [100.0, 101, 125, 126], Steadiness.NO_STEADY_STATE, 2),
])
def test_each_fork_is_classed_by_its_last_change_point(chunks, rounds_ns, kind, first_round):
    assert classify(chunks, rounds_ns) == Steady(kind, first_round)


def test_a_round_both_disturbed_and_before_its_fork_settled_counts_once_as_warm_up():
    from jvmbridge.results import disturbed

    chunks = [130.0, 131, 129, 130, 130.5, 129.5, 130, 131, 129, 130]
    slow_and_waiting = {"iterations": 1000, "ns": 130_000, "wait_ns": 0.3 * 130_000}
    summary = summarize([[slow_and_waiting] + rounds(100, 100.5) + rounds(99.5, wait=0.1)], warmups=[chunks])
    assert summary.set_aside == ("warm-up", "", "", "disturbed")
    assert summary.disturbed_rounds == 1 and summary.warmup_rounds == 1
    assert disturbed(summary).startswith("1 of 4 rounds disturbed, set aside: other threads or processes held the CPU")
