"""What else ran on the machine during a run (jvmbridge.host.machine): other processes' CPU time counted,
jvmbridge's own and its children's not; the header and a saved run's report say it alike. Real
processes burn real CPU here; the runner's engines are fakes (what is tested is the reading)."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time

import pytest
from helpers import FakeEngine, workloads

from jvmbridge.comparison.runner import plan, run, saved_comparison
from jvmbridge.engines import ENGINES, Matrix
from jvmbridge.host.machine import NOTICEABLE_CPUS, LoadWatch, load_text
from jvmbridge.render import render
from jvmbridge.results import NoteKind
from jvmbridge.saved.store import read

BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass"


def _burn_here(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _other_cpu_seconds(during) -> float:
    """Other work's CPU seconds while ``during()`` ran, as a run would record it."""
    watch = LoadWatch()
    during()
    load = watch.since()
    assert load is not None and 0.0 <= load.steal_cpus <= load.cpus
    return load.other_cpus * load.seconds


def _another_process(seconds: float) -> None:
    """A process that is not ours (orphaned at once, as a shell's background job whose shell exited)
    burns ``seconds`` of CPU; waited for by the time it must have ended."""
    subprocess.run(["sh", "-c", f"{shlex.quote(sys.executable)} -c '{BURN.format(seconds=seconds)}' &"], check=True)
    time.sleep(seconds + 0.3)


@pytest.mark.serial  # reads what every process on the machine did
def test_another_process_counts_as_other_work_and_this_one_and_its_ended_children_do_not():
    # Against what else this machine does in the same time (nothing, in CI), second by second.
    background = _other_cpu_seconds(lambda: time.sleep(1.0))
    ours = _other_cpu_seconds(lambda: (_burn_here(0.5),
                                       subprocess.run([sys.executable, "-c", BURN.format(seconds=0.5)], check=True)))
    assert ours < background + 0.25, (ours, background)
    theirs = _other_cpu_seconds(lambda: _another_process(1.0))
    assert background + 0.75 < theirs < background + 1.5, (theirs, background)


def test_the_header_says_how_busy_the_machine_was_and_a_saved_runs_report_says_the_same(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    path = tmp_path / "run.jsonl"
    comparison = run(plan(workloads(rounds=1, forks=1, max_forks=1), Matrix(engines=("one",))), output=path)
    load = comparison.metadata["load"]
    assert load["cpus"] >= 1 and load["seconds"] > 0 and load["other_cpus"] >= 0
    (line,) = [line for line in render("compare", "table", comparison).splitlines() if line.startswith("Load ")]
    assert line == f"Load     {load_text(load)}"
    loaded = read([path])
    again = render("compare", "table", saved_comparison(loaded, next(iter(loaded.runs))))
    assert line in again.splitlines()


class BesideOtherWork(FakeEngine):
    """A fake whose "on" setting runs while another process (not jvmbridge's) burns a CPU."""

    def ready(self, on, fork):
        if on:
            _another_process(0.6)


def test_a_row_whose_job_ran_beside_other_work_says_so_and_the_advice_is_printed_once(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "beside", BesideOtherWork("beside", 100.0))
    comparison = run(plan(workloads(rounds=1, forks=1, max_forks=1), Matrix(engines=("beside",))),
                     output=tmp_path / "run.jsonl")
    # Each workload's job runs its settings in turn: "on" waits for the other process, "off" does not.
    shared = [row for row in comparison.results if any(note.kind is NoteKind.SHARED for note in row.notes)]
    assert shared and all(row.other_cpus is not None and row.other_cpus >= NOTICEABLE_CPUS for row in shared)
    assert all(row.other_cpus is not None for row in comparison.results)
    (note,) = [note.text for note in shared[0].notes if note.kind is NoteKind.SHARED]
    assert note == f"other processes kept {shared[0].other_cpus:.2f} of the {os.cpu_count()} vCPUs busy on average while it ran"
    comparison.verbose = True  # its note and hint are on how the row was sampled: -v
    table = render("compare", "table", comparison)
    assert table.count(NoteKind.SHARED.hint) == 1  # the advice once, for every row it applies to
    saved = read([tmp_path / "run.jsonl"]).rows
    assert [row["other_cpus"] for row in saved] == pytest.approx([row.other_cpus for row in comparison.results])


def test_the_header_states_the_runs_load_as_a_fact():
    quiet = {"seconds": 100.0, "other_cpus": 0.05, "steal_cpus": 0.01, "cpus": 2}
    assert load_text(quiet) == "other processes kept 0.05 of the 2 vCPUs busy on average; steal 0.01"
