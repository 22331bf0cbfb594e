"""Two configurations' forks in turns (forks.parent.run_forks with two arms) and the ratio from their
pairs (comparison.ratios): real child processes of a Python worker whose speed its environment
sets (no engine), simulated forks on a host that slows for a while, and the native engines'
AES-NI on and off in a real compare.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_turns.py."""
from __future__ import annotations

import math
import os
import random
import statistics
import sys
import textwrap
from types import SimpleNamespace

import pytest

import jvmbridge.forks.parent as parent
from jvmbridge.comparison.ratios import RatioKind, speedup
from jvmbridge.forks.parent import Arm, fork_turns, run_forks
from jvmbridge.sampling.policy import Sampling
from jvmbridge.stats.summary import half_width

# Each part: two rounds at one speed per fork, LEVEL ns/op, every other fork of an arm slower by
# SPREAD of it (not drawn at random: two draws close together would make the first stage's spread
# look small and plan no more forks). FORKS: a file the arm's children count themselves in.
WORKER = """
    import json, os, sys, time
    request = json.load(sys.stdin)
    started = time.monotonic_ns()
    with open(os.environ["FORKS"], "a+") as counted:
        counted.write("fork\\n")
        counted.seek(0)
        fork = len(counted.readlines())
    level, spread = float(os.environ["LEVEL"]), float(os.environ["SPREAD"])
    ns = level * (1 + spread * (fork % 2))
    parts = [{"rounds": [{"iterations": 1000, "ns": ns * 1000}] * 2, "warmup": {"chunks": []},
              "started": started, "part": part["name"]} for part in request["parts"]]
    with open(sys.argv[1], "w") as f:
        json.dump({"parts": parts}, f)
"""


@pytest.fixture
def workers_here(tmp_path, monkeypatch):
    """The children run tmp_path's <module>.py as a script: run_child's own are isolated (-I), so no
    module on PYTHONPATH is theirs to import."""
    monkeypatch.setattr(parent, "python_command",
                        lambda module, *arguments: [sys.executable, str(tmp_path / f"{module}.py"), *arguments])


def _two_arms(tmp_path, spread: float, shared_spread: float) -> list:
    """run_forks of two arms of parts a and b, one at 100 ns/op and one at 300, every other fork of
    both slower by ``shared_spread`` (a host slower for the turn) and of the second by ``spread`` more."""
    (tmp_path / "level_worker.py").write_text(textwrap.dedent(WORKER))
    env = dict(os.environ)
    sampling = Sampling(rounds=2, forks=2, max_forks=6)
    parts = [{"name": "a"}, {"name": "b"}]
    level = 1 + shared_spread
    steady = Arm({}, parts, [sampling] * 2, env={**env, "LEVEL": "100", "SPREAD": f"{shared_spread}",
                                                 "FORKS": str(tmp_path / "steady")})
    moving = Arm({}, parts, [sampling] * 2, env={**env, "LEVEL": "300", "SPREAD": f"{level * (1 + spread) - 1}",
                                                 "FORKS": str(tmp_path / "moving")})
    return run_forks("level_worker", [steady, moving])


def test_two_arms_run_in_turns_as_many_forks_as_their_ratios_take(tmp_path, workers_here):
    # The ratios move 1% from turn to turn: Stein's rule asks 21 forks (within reach of the limit),
    # where the steady arm's rows alone would stop at its first stage, 2.
    measured = _two_arms(tmp_path, spread=0.01, shared_spread=0.0)
    assert [len(forks.finished) for forks in measured] == [6] * 4
    assert {tuple(fork_turns(forks.finished)) for forks in measured} == {tuple(range(6))}
    starts = [[outcome.answer["started"] for outcome in forks.finished] for forks in measured]
    steady_first = [a < b for a, b in zip(starts[0], starts[2])]
    assert any(steady_first) and not all(steady_first)  # each turn's order its own
    assert all(a == b for a, b in zip(starts[0], starts[1]))  # one child a turn measures an arm's every part


def test_rows_that_move_together_stop_at_the_first_stage_of_their_ratio(tmp_path, workers_here):
    # Every row 30% slower every other turn (the old rule, row by row, ran the limit, 6); their
    # ratios do not move.
    measured = _two_arms(tmp_path, spread=0.0, shared_spread=0.3)
    assert [len(forks.finished) for forks in measured] == [2] * 4


def _row(fork_ns: list[float]) -> SimpleNamespace:
    return SimpleNamespace(ns_per_op=statistics.fmean(fork_ns), ns_per_op_error=half_width(statistics.stdev(fork_ns), len(fork_ns)),
                           fork_ns_per_op=fork_ns, fork_turns=list(range(len(fork_ns))), in_turns="job", ciphertext_ok=True,
                           first_stage=0)


@pytest.mark.parametrize("drift", [0.0, 0.08])
def test_the_paired_interval_covers_the_true_ratio_and_a_shared_slowdown_does_not_widen_it(drift):
    """Forks 2% apart inside a configuration; each turn the host is slower by up to ``drift`` for
    both sides alike. The true speedup is 2.5x."""
    generator = random.Random(25)
    covered, paired_width, unpaired_width, runs = 0, [], [], 400
    for _ in range(runs):
        host = [1 + drift * generator.random() for _ in range(6)]
        fast = _row([100 * h * generator.gauss(1, 0.02) for h in host])
        slow = _row([250 * h * generator.gauss(1, 0.02) for h in host])
        paired = speedup(RatioKind.SPEEDUP, "", fast, slow, one_run=True)
        unpaired = speedup(RatioKind.SPEEDUP, "", fast, slow)
        assert paired.turns == 6 and unpaired.turns == 0
        covered += paired.low <= 2.5 <= paired.high
        paired_width.append(math.log(paired.high / paired.low))
        unpaired_width.append(math.log(unpaired.high / unpaired.low))
    assert covered >= 0.93 * runs  # 95% stated; 400 runs put a true 95% at 93% or more (99.7%)
    # Without drift the pairs' interval is about as wide as the two rows' in quadrature
    # (ratios.quotient); a slowdown both sides share widens only the latter.
    assert statistics.median(paired_width) < (0.75 if drift else 1.05) * statistics.median(unpaired_width)


def test_rows_of_other_runs_or_too_few_turns_are_not_paired():
    fast, slow = _row([100, 101, 99, 100]), _row([250, 251, 249, 250])
    assert speedup(RatioKind.ACROSS, "", fast, slow).turns == 0  # not asked: rows of two runs
    slow.in_turns = "another job"
    assert speedup(RatioKind.SPEEDUP, "", fast, slow, one_run=True).turns == 0
    slow.in_turns, slow.fork_turns = "job", [0, 6, 7, 8]  # one turn in common: no spread to pair by
    ratio = speedup(RatioKind.SPEEDUP, "", fast, slow, one_run=True)
    assert ratio.turns == 0 and ratio.describe().endswith("]")
    slow.fork_turns = [0, 1, 7, 8]  # two: paired, Student's t with one degree of freedom
    assert speedup(RatioKind.SPEEDUP, "", fast, slow, one_run=True).turns == 2


def _forks(*fork_ns: float, disturbed: tuple[int, ...] = ()) -> list[list[dict]]:
    """Forks of two rounds each at these ns/op; those at ``disturbed`` lost half their time to waits."""
    return [[{"iterations": 1000, "ns": ns * 1000, "wait_ns": ns * 500 if i in disturbed else 0}] * 2
            for i, ns in enumerate(fork_ns)]


def test_the_sides_of_ratios_run_as_many_turns_as_their_ratios_take_paired_by_turn():
    from jvmbridge.sampling.policy import forks_wanted

    sampling = Sampling(rounds=2, forks=3, max_forks=12)

    def wanted(*sides, stopped=(), turns=None):
        return forks_wanted([sampling] * len(sides), list(sides), stopped=stopped, together=[0] * len(sides),
                            turns=turns or [list(range(len(side))) for side in sides])

    # Rows 30% apart from turn to turn, their ratio steady: the first stage is all it takes.
    assert wanted(_forks(100, 130, 100), _forks(200, 260, 200)) == [False, False]
    # A third side whose ratios to them move 5%: Stein's rule asks 38 turns, within reach of 4 x 12.
    moving = _forks(300, 390 * 1.05, 300)
    assert wanted(_forks(100, 130, 100), _forks(200, 260, 200), moving) == [True] * 3
    # ... unless it failed: the two left are the group.
    assert wanted(_forks(100, 130, 100), _forks(200, 260, 200), moving, stopped=[False, False, True]) == [False] * 3
    # Paired by turn, not by position: the second side missed turn 1 (its child died on another part).
    assert wanted(_forks(100, 103, 100, 103), _forks(200, 200, 206), turns=[[0, 1, 2, 3], [0, 2, 3]]) == [False, False]
    assert wanted(_forks(100, 103, 100, 103), _forks(200, 200, 206)) == [True, True]  # as if by position
    # A fork that lost every round to waits has no figure: its turn pairs nothing, and one more runs.
    assert wanted(_forks(100, 130, 100, disturbed=(1,)), _forks(200, 260, 200)) == [True, True]
    assert wanted(_forks(100, 130, 100, 100, disturbed=(1,)), _forks(200, 260, 200, 200)) == [False, False]
