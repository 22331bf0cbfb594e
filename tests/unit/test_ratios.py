"""The interval of a ratio of two rows that did not run in turns (comparison.ratios.quotient): each
row's interval over its forks, combined in quadrature on the log scale. Simulated rows with a known
true ratio; no engine."""
from __future__ import annotations

import math
import random
import statistics
from types import SimpleNamespace

import pytest

from jvmbridge.comparison.ratios import RatioKind, quotient, speedup
from jvmbridge.stats.summary import half_width

TRUE_RATIO = 2.5  # the slow row's true ns/op over the fast one's


def _row(fork_ns: list[float]) -> SimpleNamespace:
    """A row as stats.summary.summarize makes one: the mean of its forks, Student's t over them."""
    return SimpleNamespace(ns_per_op=statistics.fmean(fork_ns), ns_per_op_error=half_width(statistics.stdev(fork_ns), len(fork_ns)),
                           ciphertext_ok=True)


def _sum_rule_log_width(slow, fast) -> float:
    """The log width of the interval the rule before this one gave: the two intervals' ends."""
    return math.log((slow.ns_per_op + slow.ns_per_op_error) / (fast.ns_per_op - fast.ns_per_op_error)
                    * (fast.ns_per_op + fast.ns_per_op_error) / (slow.ns_per_op - slow.ns_per_op_error))


@pytest.mark.parametrize("forks, spreads", [
    ((3, 3), (0.02, 0.02)),  # as few forks as a row gets an interval with, alike
    ((4, 12), (0.05, 0.01)),  # a short noisy row against a long quiet one: Welch's case
    ((12, 4), (0.08, 0.01)),
    ((6, 6), (0.10, 0.10)),  # wide intervals, where the log scale's asymmetry shows
])
def test_the_interval_of_two_independent_rows_covers_the_true_ratio_and_is_narrower_than_their_sum(forks, spreads):
    generator = random.Random(16)
    runs, covered, widths, sum_widths = 400, 0, [], []
    for _ in range(runs):
        fast = _row([100 * generator.gauss(1, spreads[0]) for _ in range(forks[0])])
        slow = _row([100 * TRUE_RATIO * generator.gauss(1, spreads[1]) for _ in range(forks[1])])
        ratio = speedup(RatioKind.VERSUS, "", fast, slow)
        assert ratio.turns == 0 and ratio.low < ratio.value < ratio.high
        covered += ratio.low <= TRUE_RATIO <= ratio.high
        widths.append(math.log(ratio.high / ratio.low))
        sum_widths.append(_sum_rule_log_width(slow, fast))
    assert covered >= 0.93 * runs  # 95% stated; 400 runs put a true 95% at 93% or more (99.7%)
    # Alike intervals: near 1/sqrt(2) of their sum; one much wider than the other: about that one alone.
    assert statistics.median(widths) < (0.8 if spreads[0] == spreads[1] else 0.95) * statistics.median(sum_widths)


def test_two_intervals_that_overlap_can_still_say_which_is_faster():
    # 100 ± 3 against 105 ± 3: the ranges meet (103 > 102), yet the ratio's interval excludes 1.
    value, low, high, significant = quotient(105, 3, 100, 3)
    assert value == 1.05 and significant and 1 < low < 1.05 < high
    assert not quotient(102, 3, 100, 3)[3]


def test_a_side_without_error_leaves_the_other_sides_interval_and_a_single_figure_none():
    assert quotient(110, 11, 100, 0) == pytest.approx((1.1, 0.99, 1.21, False))
    assert quotient(100, 0, 50, 5)[1:3] == pytest.approx((100 / 55, 100 / 45))
    value, low, high, significant = quotient(100, math.inf, 50, 1)  # one round: no interval at all
    assert (value, low, high, significant) == (2.0, 0.0, math.inf, False)
    assert quotient(100, 120, 50, 1)[1] == 0.0  # an interval reaching 0 ns/op bounds nothing below
