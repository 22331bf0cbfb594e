"""Rounds per fork from this host's earlier runs (comparison.dimensioning): the
components recovered from simulated rows with known ones, the choice following them and their
costs, and the runner choosing from runs it saved itself. Fake engines only: what is tested is the
choice, never an engine."""
from __future__ import annotations

import math
import random

import pytest
from helpers import FakeEngine

from jvmbridge.comparison.dimensioning import ROUNDS_CEILING, ROUNDS_FLOOR, Components, choose_rounds, components
from jvmbridge.comparison.runner import plan, run
from jvmbridge.engines import ENGINES, Matrix
from jvmbridge.results import NoteKind
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import combinations
from jvmbridge.saved.store import read
from jvmbridge.stats.summary import fork_summary


def simulated_row(draw: random.Random, between: float, within: float, forks: int = 12, rounds: int = 4,
                  fork_seconds: float = 2.0, ns: float = 100.0) -> dict:
    """A saved row's fields as compare writes them, for forks whose level varies by ``between``
    (relative sd) and whose rounds vary by ``within`` around it; 1000 messages a round."""
    per_fork = []
    for _ in range(forks):
        level = ns * (1 + draw.gauss(0, between))
        per_fork.append([level * (1 + draw.gauss(0, within)) for _ in range(rounds)])
    summaries = [fork_summary(fork) for fork in per_fork]
    return {"rounds": forks * rounds, "forks": forks, "fork_ns_per_op": summaries,
            "ns_per_op": sum(summaries) / forks, "round_fork": [f for f in range(forks) for _ in range(rounds)],
            "round_ns_per_op": [value for fork in per_fork for value in fork],
            "round_iterations": [1000] * (forks * rounds), "round_set_aside": [""] * (forks * rounds),
            "fork_seconds": [fork_seconds] * forks}


def test_the_components_come_back_from_rows_of_known_between_and_within_fork_spread():
    draw = random.Random(1)
    apart = components([simulated_row(draw, between=0.03, within=0.01) for _ in range(5)])
    assert apart is not None and apart.runs == 5
    assert math.sqrt(apart.between) == pytest.approx(0.03, rel=0.3)
    # A lower quartile of r normal rounds varies as about 1.4-1.9 sigma^2 / r (its bootstrap, small r).
    assert 1.0 * 0.01 ** 2 < apart.within < 2.5 * 0.01 ** 2
    # 100 ns/op x 1000 messages a round; each fork 2 s, of which its 4 rounds 0.4 ms.
    assert apart.round_seconds == pytest.approx(1e-4, rel=0.05) and apart.fork_seconds == pytest.approx(2.0, rel=1e-3)
    alike = components([simulated_row(draw, between=0.0, within=0.02) for _ in range(5)])
    assert alike is not None and alike.between < 0.005 ** 2 < alike.within
    # One run's components swing: too few to go by; rows saved without fork times say nothing.
    assert components([simulated_row(draw, 0.0, 0.02)]) is None
    assert components([{**simulated_row(draw, 0.0, 0.02), "fork_seconds": []} for _ in range(3)]) is None


def test_rounds_set_aside_leave_the_variances_as_the_rounds_kept_give_them():
    rows = [simulated_row(random.Random(seed), between=0.01, within=0.02) for seed in range(3)]
    disturbed = []
    for row in rows:  # each fork's 4 rounds, then 4 disturbed ones twice as slow, set aside
        extra = [(fork, ns * 2) for fork, ns in zip(row["round_fork"], row["round_ns_per_op"])]
        disturbed.append({**row, "rounds": row["rounds"] * 2, "round_fork": row["round_fork"] + [f for f, _ in extra],
                          "round_ns_per_op": row["round_ns_per_op"] + [ns for _, ns in extra],
                          "round_iterations": row["round_iterations"] * 2,
                          "round_set_aside": row["round_set_aside"] + ["run-queue wait"] * len(extra)})
    kept, with_aside = components(rows), components(disturbed)
    assert kept is not None and with_aside is not None
    assert (with_aside.within, with_aside.between) == pytest.approx((kept.within, kept.between), rel=1e-9)


def test_what_a_fork_costs_beyond_its_rounds_counts_the_spare_rounds_each_fork_ran():
    rows = []
    for seed in range(3):  # forks of 4, 5 and 6 rounds (spare ones in place of disturbed ones), 2 s each
        row = simulated_row(random.Random(seed), between=0.01, within=0.02, forks=3, rounds=6)
        keep = [i for i, fork in enumerate(row["round_fork"]) if i % 6 < 4 + fork]
        rows.append({**row, "rounds": 15, **{name: [row[name][i] for i in keep] for name in
                                             ("round_fork", "round_ns_per_op", "round_iterations", "round_set_aside")}})
    found = components(rows)
    assert found is not None
    # Each fork's 2 s less its own rounds: 5 on average (15 // 3 happens to agree; 16 would not).
    assert found.fork_seconds == pytest.approx(2.0 - 5 * found.round_seconds, rel=1e-9)
    uneven = [{**row, "rounds": 16, "round_fork": row["round_fork"] + [2],
               **{name: row[name] + row[name][-1:] for name in ("round_ns_per_op", "round_iterations", "round_set_aside")}}
              for row in rows]
    found = components(uneven)
    assert found is not None and found.fork_seconds == pytest.approx(2.0 - 16 / 3 * found.round_seconds, rel=1e-9)


def test_more_rounds_where_forks_cost_more_and_differ_less_and_none_where_the_target_is_out_of_reach():
    sampling = Sampling(forks=4)  # 4 forks first, up to 12, ±2%
    alike_dear = Components(within=0.02 ** 2 * 1.6, between=0.0, fork_seconds=2.0, round_seconds=0.5, runs=3)
    chosen = alike_dear.best_rounds(sampling)
    assert chosen is not None and ROUNDS_FLOOR < chosen <= ROUNDS_CEILING
    # It is the cheapest of the counts that reach the target, by the same arithmetic.
    costs = {r: alike_dear.forks_and_seconds(r, sampling) for r in range(ROUNDS_FLOOR, ROUNDS_CEILING + 1)}
    assert costs[chosen][1] == min(seconds for forks, seconds in costs.values() if forks <= sampling.fork_limit)
    # Forks that differ: rounds buy nothing the between-fork spread does not take back; the floor.
    apart = Components(within=0.01 ** 2, between=0.015 ** 2, fork_seconds=2.0, round_seconds=0.5, runs=3)
    assert apart.best_rounds(sampling) == ROUNDS_FLOOR
    # Free forks: more of them rather than longer ones.
    assert Components(alike_dear.within, 0.0, 0.0, 0.5, 3).best_rounds(sampling) == ROUNDS_FLOOR
    # Forks 10% apart: no count reaches ±2% within 12 forks; the default stays and the row says how far it got.
    assert Components(0.01 ** 2, 0.1 ** 2, 2.0, 0.5, 3).best_rounds(sampling) is None
    assert "forks differed by 0.0%" in alike_dear.said(chosen) and "a fork cost 2.0 s" in alike_dear.said(chosen)
    # One fork first (--forks 1): no spread for Stein's rule (t with no degrees of freedom); the default stays.
    assert alike_dear.best_rounds(Sampling(forks=1, max_forks=1)) is None


class NoisyForks(FakeEngine):
    """A fake whose forks sit at one level (no between-fork spread) with 5% noise in every slice
    (one-sided, as here) and cost 2 s each beyond their 4 rounds of 0.5 s: the case where more rounds per fork are cheaper than more
    forks. One setting, one worker a fork measuring every workload."""

    def __init__(self):
        super().__init__("noisy", 100.0, noise=0.0)

    def sliced(self, workloads, matrix):
        return [self.setting(True, list(workloads))]

    def slice_ns(self, workload, on, fork, draw):
        return self.ns * (1 + abs(draw.gauss(0, 0.05)))

    def measurement(self, on, workload, outcomes, failed):
        measured = super().measurement(on, workload, outcomes, failed)
        measured.fork_seconds = [4.0] * len(outcomes)
        return measured


def test_compare_chooses_rounds_from_this_hosts_earlier_runs_of_the_same_job_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.setitem(ENGINES, "noisy", NoisyForks())
    matrix = Matrix(engines=("noisy",), interleaved=False)  # rounds: slices a fork in turns
    chosen = Sampling(forks=4, rounds_from_history=True)  # 4 first: more rounds pay there
    for _ in range(2):  # the dimensioning runs: nothing earlier, so 4 rounds
        jobs = plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message"], chosen), matrix)
        choose_rounds(jobs, "here")
        assert [part.workload.sampling.rounds for job in jobs for part in job.parts] == [Sampling.rounds]
        run(jobs, host_name="here")
    jobs = plan(combinations([(128, "cbc")], ["encrypt"], [16, 64], ["message"], chosen), matrix)
    other_host = plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message"], chosen), matrix)
    given = plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message"], Sampling(forks=4)), matrix)
    choose_rounds(jobs, "here")
    choose_rounds(other_host, "elsewhere")
    choose_rounds(given, "here")
    sixteen, sixty_four = jobs[0].parts
    # The same job at the same size, whatever else the run measures: rounds chosen and said why.
    assert sixteen.workload.sampling.rounds > Sampling.rounds and "from 2 earlier runs" in sixteen.rounds_basis
    # A size never run before, another host's runs, --rounds given: the default, nothing said.
    for part in (sixty_four, other_host[0].parts[0], given[0].parts[0]):
        assert part.workload.sampling.rounds == Sampling.rounds and not part.rounds_basis
    comparison = run(jobs, host_name="here", output=tmp_path / "third.jsonl")
    # The header says what the run was asked, not the first row's choice (the row's note says that).
    assert comparison.metadata["workload"]["budget"].startswith(f"{Sampling.rounds} rounds of 0.5 s per fork (or as")
    assert comparison.metadata["workload"]["rounds"] == Sampling.rounds
    row = comparison.results[0]
    assert row.rounds == row.forks * sixteen.workload.sampling.rounds and row.rounds_basis == sixteen.rounds_basis
    assert [n.text for n in row.notes if n.kind is NoteKind.ROUNDS] == [sixteen.rounds_basis]
    (saved,) = [r for r in read([comparison.output]).rows if r["message_bytes"] == 16]
    assert saved["rounds_basis"] == sixteen.rounds_basis and saved["job"] == "fake noisy, on"
    assert saved["fork_seconds"] == [4.0] * row.forks
