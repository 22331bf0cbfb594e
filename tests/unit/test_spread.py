"""conductor.spread: which fork made a wide ratio's first-stage spread, and which row moved in it."""
from __future__ import annotations

from jvmbridge.conductor.spread import one_fork

SIDES = ("JVM, intrinsics off", "JVM, intrinsics on")
OFF = {0: 400.0, 1: 402.0, 2: 398.0, 3: 440.0, 4: 401.0}  # fork 3: the JIT's slower way, this row alone
ON = {fork: 100.0 * (1 + 0.001 * fork) for fork in OFF}


def first(off: dict[int, float], on: dict[int, float]) -> list[tuple[int, float, float]]:
    return [(fork, off[fork], on[fork]) for fork in off]


def test_the_fork_that_widened_the_spread_is_named_with_the_row_that_moved_in_it():
    found = one_fork(first(OFF, ON), SIDES)
    assert found is not None and found.fork == 3 and found.wider > 5
    assert found.moved == ((SIDES[0], 440.0 / 400.5 - 1),)  # against its median over the other forks
    assert found.said() == (f"fork 4 made that spread {found.wider:.1f} times as wide, where JVM, intrinsics off ran "
                            "9.9% slower than in the other first forks")


def test_both_sides_are_named_where_both_moved_the_ratio_its_way_and_neither_where_one_moved_against_it():
    faster = {fork: value * (0.95 if fork == 3 else 1.0) for fork, value in ON.items()}  # the ratio higher still
    assert [label for label, _ in one_fork(first(OFF, faster), SIDES).moved] == list(SIDES)
    slower = {fork: value * (1.03 if fork == 3 else 1.0) for fork, value in ON.items()}  # against: it lowers it
    assert [label for label, _ in one_fork(first(OFF, slower), SIDES).moved] == [SIDES[0]]


def test_an_even_spread_or_a_first_stage_cut_short_names_no_fork():
    even = {fork: 400.0 * (1 + 0.01 * step) for fork, step in enumerate([-2, -1, 0, 1, 2])}
    assert one_fork(first(even, ON), SIDES) is None
    assert one_fork(first(OFF, ON)[1:], SIDES) is None  # 4 forks: the threshold is taken at 5
    assert one_fork([(fork, 400.0 * (1 + fork / 100), 100.0 * (1 + fork / 100)) for fork in range(5)], SIDES) is None
