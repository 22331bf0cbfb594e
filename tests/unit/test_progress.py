"""Progress while compare, verify and check run: the runner's updates (on fake engines, fast), the
time-left forecast (fast, on known costs), and the live display of the real CLI on a terminal.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_progress.py."""
from __future__ import annotations

import math
import time

import pytest
from helpers import EVIL, SHOWN, FakeEngine

from jvmbridge.cli.live import CompareProgress, fitted
from jvmbridge.comparison.runner import plan, run
from jvmbridge.engines import ENGINES, Matrix
from jvmbridge.render import render
from jvmbridge.results import NoteKind
from jvmbridge.sampling.policy import FINISH_SECONDS, Sampling, TimeLimit
from jvmbridge.sampling.progress import Forecast, JobPlan, PartSoFar, RatioSoFar, Update
from jvmbridge.sampling.workload import combinations


class ForkingFake(FakeEngine):
    """A fake engine whose loop runs fork after fork as the real ones do, telling progress after
    each; each fork's figure 1% above the one before, each taking ``fork_seconds``."""

    def __init__(self, *args, fork_seconds: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.fork_seconds = fork_seconds

    def ready(self, on, fork):
        time.sleep(self.fork_seconds)

    def slice_ns(self, workload, on, fork, draw):
        return self.centre(workload, on) * (1 + 0.01 * fork)


def test_the_runner_says_when_each_job_starts_after_each_turn_and_when_it_ends(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "fork", ForkingFake("fork", 100.0))
    updates = []
    run(plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message"], Sampling(rounds=2, forks=3, max_forks=3)),
             Matrix(engines=("fork",), interleaved=False)), updates.append, output=tmp_path / "run.jsonl")
    assert {(u.job, u.jobs) for u in updates} == {(0, 1)}  # the engine's settings in one job, in turns
    assert updates[0].parts == () and not updates[0].finished  # started, before a fork
    # After each setting's turn: the forks finished before the running one, of the 3 planned; then done.
    assert [u.parts[0][1].forks for u in updates[1:]] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert all([label for label, _ in u.parts] == ["fake fork, on", "fake fork, off"] and u.parts[0][1].planned == 3
               for u in updates[1:])
    assert updates[-1].finished and not any(u.finished for u in updates[:-1])
    # The speedup over the forks finished so far, from the first fork on.
    assert [len(u.ratios or ()) for u in updates[1:-1]] == [0, 0, 1, 1, 1, 1, 1]
    assert updates[-1].seconds_left == 0
    assert all(b.elapsed >= a.elapsed for a, b in zip(updates, updates[1:]))


def test_the_forecast_is_within_30_percent_from_halfway_on_the_costs_of_a_default_compare():
    # The costs of a default compare here (benchmarks/README.md, "Time left"): per job its engine,
    # timed seconds per fork, seconds a fork took beyond them, forks run (a noisy job ran 8 or 12).
    costs = [("jvm", 2.0, 1.56, 4), ("jvm", 2.0, 1.39, 4), ("c-loop", 2.0, 0.28, 12), ("c-loop", 2.0, 0.29, 4),
             ("pyca", 2.0, 0.28, 8), ("pyca", 2.0, 0.26, 4), ("openssl-cli", 1.0, 0.01, 4), ("openssl-cli", 1.0, 0.01, 4)]
    forecast = Forecast([JobPlan(engine, timed, 4, ENGINES[engine].fork_overhead_seconds) for engine, timed, _, _ in costs])
    fork_seconds = [timed + extra for _, timed, extra, _ in costs]
    total = sum(seconds * forks for seconds, (*_, forks) in zip(fork_seconds, costs))
    elapsed, said = 0.0, []  # (elapsed, forecast) after each fork
    for index, (seconds, (*_, forks)) in enumerate(zip(fork_seconds, costs)):
        for done in range(forks):  # after each fork of the job: its planned forks known from the first stage
            planned = forks if done >= 4 else 4
            said.append((elapsed, forecast.seconds_left(index, done * seconds, [PartSoFar(done, planned, 1, 0)])))
            elapsed += seconds
        forecast.finished(index, seconds * forks, forks)
    at, left = max((pair for pair in said if pair[0] <= total / 2), key=lambda pair: pair[0])
    assert left == pytest.approx(total - at, rel=0.3)


def test_a_fork_of_settings_in_turns_costs_each_process_its_overhead():
    # The JVM's settings in turns (two processes a fork), then a provider with one setting.
    forecast = Forecast([JobPlan("jvm", 4.0, 4, 1.5, processes=2), JobPlan("jvm", 2.0, 4, 1.5)])
    assert forecast.seconds_left(0) == pytest.approx(4 * (4.0 + 2 * 1.5) + 4 * (2.0 + 1.5))
    forecast.finished(0, 4 * (4.0 + 2 * 2.5), 4)  # each process took 2.5 s beyond its rounds
    assert forecast.seconds_left(1) == pytest.approx(4 * (2.0 + 2.5))


def test_a_total_time_shares_the_rest_out_by_cost_and_cuts_even_a_first_stage_to_three_forks():
    # Three jobs of 4 forks first, 1 s a fork: 12 s of first stages; a 30 s limit leaves 18 s.
    # (The limit's last FINISH_SECONDS are the run's figures, table and file's.)
    forecast = Forecast([JobPlan("c-loop", 1.0, 4, 0.0)] * 3)
    limit = TimeLimit(30 + FINISH_SECONDS, forecast)
    assert limit.share(0, 0) == pytest.approx(4 + 18 / 3)  # its first stage, a third of what is left
    assert limit.share(1, 5) == pytest.approx(4 + (25 - 8) / 2)  # the first left 5 s: they go to the others
    assert TimeLimit(5, forecast).share(0, 0) == pytest.approx(4)  # too short: the first stage all the same
    # A JVM job of forks at 3 s, then a C loop's at 1 s: 16 s of first stages, 16 s spare for 32 s.
    # Shared by cost, each may double its forks; shared equally, the JVM's 8 s would buy it 2 forks.
    dear_and_cheap = TimeLimit(32 + FINISH_SECONDS, Forecast([JobPlan("jvm", 1.0, 4, 2.0), JobPlan("c-loop", 1.0, 4, 0.0)]))
    assert dear_and_cheap.share(0, 0) == pytest.approx(24)
    assert TimeLimit.forks(dear_and_cheap.share(0, 0), 4, 4, 12.0, next_fork=3.0) == 8
    assert TimeLimit.forks(10, 4, 0, 1.0, next_fork=None) == 4  # before a fork finished: the first stage
    assert TimeLimit.forks(10, 4, 2, 2.0, next_fork=1.0) == 10  # 8 s left at 1 s a fork
    assert TimeLimit.forks(10, 5, 2, 8.0, next_fork=4.0) == 3  # 4 s a fork: the first stage cut, to three forks
    assert TimeLimit.forks(10, 4, 4, 4.0, next_fork=1.0) == 10  # 6 s left at 1 s a fork
    assert TimeLimit.forks(10, 4, 6, 9.0, next_fork=1.5) == 6  # 1.5 s a fork: the next would not fit
    assert TimeLimit.forks(3, 4, 4, 8.0, next_fork=2.0) == 3  # over its share already: no more
    # Forks forecast dearer than the pace so far (warm-ups in line): the next must fit at that.
    assert TimeLimit.forks(10, 4, 4, 4.0, next_fork=7.0) == 4
    assert TimeLimit.forks(10, 4, 4, 4.0, next_fork=2.0) == 7  # 6 s left, 2 s each
    assert TimeLimit.forks(10, 4, 4, 4.0, next_fork=6.0) == 5  # exactly fits
    assert TimeLimit.forks(10, 5, 2, 8.0, next_fork=9.0) == 3  # never under three forks, though it would not fit


class SlowForkingFake(ForkingFake):
    """Forks of ``fork_seconds`` each, forecast as such; its speedup 1% higher each fork."""
    fork_overhead_seconds = 0.0

    def slice_ns(self, workload, on, fork, draw):
        return self.centre(workload, on) * (1 - 0.01 * fork if on else 1)

    def timed_seconds(self, sampling):
        return self.fork_seconds


@pytest.mark.parametrize("total_time", [None, 1.0])
def test_a_total_time_stops_forks_the_rule_wants_and_the_rows_say_so(monkeypatch, tmp_path, total_time):
    monkeypatch.setitem(ENGINES, "slow", SlowForkingFake("slow", 100.0, fork_seconds=0.05))
    sampling = Sampling(rounds=2, forks=3, max_forks=20, target_error=0.006)  # within reach, beyond the limit
    comparison = run(plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message"], sampling),
                          Matrix(engines=("slow",))), output=tmp_path / "run.jsonl", total_time=total_time)
    forks = [row.forks for row in comparison.results]
    noted = [[note for note in row.notes if note.kind is NoteKind.TOTAL_TIME] for row in comparison.results]
    if total_time is None:
        assert forks == [20, 20] and noted == [[], []] and "total_time_seconds" not in comparison.metadata
        return
    # Two jobs of 3 forks first (0.3 s): each about half of the 0.7 s beyond, 7 forks more at most.
    assert all(3 <= count <= 3 + 8 for count in forks), forks
    assert all(len(notes) == 1 and "stopped its job" in notes[0].text for notes in noted)
    assert comparison.metadata["total_time_seconds"] == 1.0
    method = next(line for line in render("compare", "table", comparison).splitlines() if line.startswith("Method "))
    assert method.endswith("within 1 s in all (--total-time)")


def test_under_a_total_time_the_cheapest_jobs_run_first_and_the_table_keeps_its_order(monkeypatch, tmp_path):
    # What a job leaves of its share goes only to those after it: the dear forks run last to get it.
    monkeypatch.setitem(ENGINES, "dear", SlowForkingFake("dear", 100.0, fork_seconds=0.03))
    monkeypatch.setitem(ENGINES, "cheap", SlowForkingFake("cheap", 10.0, fork_seconds=0.003, shapes=("stream",)))
    jobs = plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message"], Sampling(rounds=2, forks=3, max_forks=3)),
                Matrix(engines=("dear", "cheap"), interleaved=False))
    assert [job.engine for job in jobs] == ["dear", "cheap"]
    updates = []
    comparison = run(jobs, updates.append, output=tmp_path / "run.jsonl", total_time=5.0)
    assert [u.engine for u in updates if u.finished] == ["cheap", "dear"]
    assert [row.engine for row in comparison.results] == ["fake dear"] * 2 + ["fake cheap"] * 2
    # The run's workload is the one asked for, not that of the job that happened to run first.
    assert comparison.metadata["workload"]["shape"] == "message"
    assert comparison.metadata["workload"]["shapes"] == ["message", "stream"]


def test_a_job_that_pairs_its_configurations_shows_its_forks_once_and_each_ratio_so_far():
    part = PartSoFar(forks=5, planned=10, figure_ns=None, relative_error=math.inf)
    display = CompareProgress()
    display(Update(job=0, jobs=1, label="every configuration at once", engine="jvm",
                   parts=(("JVM, intrinsics on", part), ("JVM, intrinsics off", part)), elapsed=80.0,
                   job_elapsed=80.0, seconds_left=90.0,
                   ratios=(RatioSoFar(label="intrinsics speedup, JVM", times=6.2, relative_error=0.016, forks=5),
                           RatioSoFar(label="AES-NI speedup, C loop", times=2.57, relative_error=math.inf, forks=1))))
    shown = [fitted(line, 100) for line in display.lines()]
    assert shown[0].endswith("s every configuration at once · fork 6 of 10")
    assert shown[1].split() == ["6.20x", "±1.6%", "intrinsics", "speedup,", "JVM"]
    assert shown[2].split() == ["2.57x", "AES-NI", "speedup,", "C", "loop"]  # one fork: no interval yet
    assert shown[3].lstrip().startswith("1 min 20 s so far, about 1 min 30 s left")
    assert not any("intrinsics on" in line for line in shown)  # not a line per configuration
    # Narrow, a long label gives way and the figure stays.
    assert fitted(display.lines()[1], 30).split()[:2] == ["6.20x", "±1.6%"]
    # ... in its middle: two labels that differ only at their end (the shape) stay told apart.
    long = "intrinsics speedup, JVM java-17-openjdk-amd64 (17.0.15), SunJCE, "
    message, stream = (fitted(("      6.20x", long + shape, ""), 60) for shape in ("message", "stream"))
    assert len(message) <= 60 and message.endswith("message") and stream.endswith("stream") and "…" in message
    # A JDK's label from its own release file is drawn escaped, and fitted as drawn.
    assert fitted(("  [1/2]", f"JVM {EVIL}", "starting"), 200) == f"  [1/2] JVM {SHOWN} · starting"
