"""Levels of a ratio (stats.levels), tried on simulated runs of 12 forks shaped like this machine's:
each row's fork figure spreads 0.7% between forks with now and then a fork a percent or so slower,
slices spread 1% inside a fork, and the JVM's intrinsics-off message row settles, in one fork in
four, at a level of its own 10% slower (the JIT compiled it the other way), the other rows as
elsewhere. A ratio with two levels is said as two, each with its share and an interval covering its
true value; a ratio of one level is never split, not by noise nor by host episodes."""
from __future__ import annotations

import math

import numpy as np
import pytest

from jvmbridge.stats.levels import ratio_levels
from jvmbridge.stats.summary import CONFIDENCE

RUNS = 2000
FORKS = 12
SLOWER, FASTER = "JVM, intrinsics off, messages", "C loop, AES-NI on, messages"
OTHERS = ("openssl speed, AES-NI on", "JVM, intrinsics on, messages", "C loop, AES-NI off, messages")
NS = {SLOWER: 432.0, FASTER: 65.0, OTHERS[0]: 61.0, OTHERS[1]: 69.0, OTHERS[2]: 340.0}
TRUE_RATIO = NS[SLOWER] / NS[FASTER]
JIT_LEVEL = 1.10  # the slower way the JIT compiles the intrinsics-off loop
WITHIN_RSD = dict.fromkeys(NS, 0.01)


def calm_slowdown(generator: np.random.Generator) -> float:
    return 1 + (abs(generator.normal(0, 0.01)) if generator.random() < 0.1 else 0.0)


def draw_run(generator: np.random.Generator, jit_share: float = 0.0,
             episode_rate: float = 0.0) -> tuple[list[float], dict[str, list[float]], list[bool]]:
    """12 forks: the ratio SLOWER / FASTER in each, every row's figure, and which forks ran SLOWER's
    loop at its slower JIT level. An episode (``episode_rate`` of forks) slows every row by its own 10-60%."""
    rows: dict[str, list[float]] = {label: [] for label in NS}
    jit = [bool(generator.random() < jit_share) for _ in range(FORKS)]
    for slow in jit:
        episode = generator.random() < episode_rate
        for label, ns in NS.items():
            level = JIT_LEVEL if slow and label == SLOWER else 1.0
            hit = 1 + generator.uniform(0.10, 0.60) if episode else 1.0
            rows[label].append(ns * level * hit * math.exp(generator.normal(0, 0.007)) * calm_slowdown(generator))
    ratios = [slower / faster for slower, faster in zip(rows[SLOWER], rows[FASTER])]
    return ratios, rows, jit


def test_a_ratio_whose_row_settled_at_two_levels_is_said_as_two_levels_with_their_shares():
    found = misses = misplaced = covered = intervals = 0
    for seed in range(RUNS):
        ratios, rows, jit = draw_run(np.random.default_rng(seed), jit_share=0.25)
        slow = sum(jit)
        if not 2 <= slow <= FORKS - 2:  # one fork apart is not a level: nothing to find
            continue
        levels = ratio_levels(ratios, rows, WITHIN_RSD)
        if levels is None:
            misses += 1
            continue
        found += 1
        assert levels.row == SLOWER and len(levels.levels) == 2
        main, other = levels.levels
        assert main.forks >= other.forks and main.share + other.share == pytest.approx(1)
        higher = max(range(2), key=lambda index: levels.levels[index].value)
        # Each fork at its own level, so the shares are right (a calm fork's one-sided luck may
        # now and then put it nearer the slower level than its own).
        misplaced += [level == higher for level in levels.fork_level] != jit
        for level in levels.levels:
            truth = TRUE_RATIO * (JIT_LEVEL if level.value > TRUE_RATIO * 1.05 else 1.0)
            covered += level.low <= truth <= level.high
            intervals += 1
    assert misses <= 0.02 * (found + misses), f"{misses} of {found + misses} runs with two levels said one"
    assert misplaced <= 0.01 * found, f"{misplaced} of {found} runs put a fork at the other level"
    # Each level's interval is Student's t over its own forks; a share shared among levels misses
    # none of its forks' spread.
    assert covered / intervals >= CONFIDENCE - 2 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / intervals)


@pytest.mark.parametrize("episode_rate", [0.0, 0.1])
def test_a_ratio_of_one_level_is_never_split(episode_rate):
    # Host episodes (every row slowed at once) are no level of one row, even where no yardstick set them aside.
    for seed in range(RUNS):
        ratios, rows, _ = draw_run(np.random.default_rng(seed), episode_rate=episode_rate)
        assert ratio_levels(ratios, rows, WITHIN_RSD) is None, f"run {seed} split"


def test_levels_the_ratio_does_not_show_are_not_its_levels():
    # Both sides of the ratio at the same two levels (a level every row shared): the ratio has one.
    generator = np.random.default_rng(0)
    high = [index % 4 == 0 for index in range(FORKS)]
    both = {label: [NS[label] * (1.1 if h else 1.0) * math.exp(generator.normal(0, 0.005)) for h in high]
            for label in (SLOWER, FASTER)}
    ratios = [s / f for s, f in zip(both[SLOWER], both[FASTER])]
    assert ratio_levels(ratios, both, WITHIN_RSD) is None


def test_a_row_that_sat_out_some_forks_still_says_it_moved_with_the_levels():
    # SLOWER at two levels, and another row moving with it (not the JIT's: the host's) in the forks
    # it ran; it sat out forks 5-11 (docs/decisions/0014-forks-run-the-ratios-still-short.md).
    high = [index % 3 == 0 for index in range(FORKS)]
    rows = {SLOWER: [NS[SLOWER] * (1.1 if h else 1.0) for h in high], FASTER: [NS[FASTER]] * FORKS,
            OTHERS[1]: [NS[OTHERS[1]] * (1.1 if h else 1.0) if index < 5 else None for index, h in enumerate(high)]}
    ratios = [s / f for s, f in zip(rows[SLOWER], rows[FASTER])]
    assert ratio_levels(ratios, {SLOWER: rows[SLOWER], FASTER: rows[FASTER]}, WITHIN_RSD) is not None
    assert ratio_levels(ratios, rows, WITHIN_RSD) is None


def test_the_issues_run():
    # 9 forks at ~432 ns, 3 at 471-487; the C loop's row normal throughout.
    slower = [432, 431, 433, 471, 432, 434, 430, 487, 432, 431, 479, 433]
    faster = [64.6, 64.5, 64.7, 64.6, 64.4, 64.6, 64.5, 64.7, 64.6, 64.5, 64.6, 64.4]
    ratios = [s / f for s, f in zip(slower, faster)]
    levels = ratio_levels(ratios, {SLOWER: slower, FASTER: faster}, {SLOWER: 0.01, FASTER: 0.01})
    assert levels is not None and levels.row == SLOWER
    assert [(level.forks, round(level.share, 2)) for level in levels.levels] == [(9, 0.75), (3, 0.25)]
    assert levels.fork_level == (0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0)
    assert levels.levels[0].value == pytest.approx(6.69, abs=0.01)
    assert levels.said("when the JIT compiles the loop its slower way") == \
        "6.69x, or 7.41x when the JIT compiles the loop its slower way: 3 forks of 12"
    assert levels.as_dict()["levels"][1]["forks"] == 3

