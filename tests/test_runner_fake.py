"""The runner, ratios, notes and the compare report on fake engines: seconds, no JVM, no OpenSSL.

The engines here are fakes on purpose: they test what sits around engines (planning, saving,
failures, statistics, ratios, rendering), never an engine itself.
"""
from __future__ import annotations

import json
import math
import random

import pytest

from jvmbridge.child import WorkerError
from jvmbridge.engines import ENGINES, Engine, Job
from jvmbridge.ratios import RatioKind
from jvmbridge.render import render
from jvmbridge.results import Measurement, NoteKind
from jvmbridge.runner import Matrix, plan, run
from jvmbridge.stats import summarize
from jvmbridge.store import read
from jvmbridge.workload import Sampling, Workload, combinations


class FakeEngine(Engine):
    """Measures nothing: its rounds are drawn around ``ns`` (on) or ``ns * slowdown`` (off), with a
    relative spread ``noise``; ``fail_off`` makes its unaccelerated setting fail."""
    accelerator = "fake acceleration"

    def __init__(self, key, ns, slowdown=4.0, noise=0.001, rank=None, shapes=("message", "stream"),
                 wraps=None, fail_off=False):
        self.key, self.label, self.ns, self.slowdown, self.noise = key, f"fake {key}", ns, slowdown, noise
        self.reference_rank, self.shapes, self.wraps, self.fail_off = rank, shapes, wraps, fail_off
        self.overhead = "wrapper" if wraps else ""

    def jobs(self, workload, matrix, tag):
        return [Job(f"{self.label}, {'on' if on else 'off'}{tag}", workload, lambda on=on: self.measure(workload, on))
                for on in (True, False)]

    def measure(self, workload: Workload, on: bool) -> Measurement:
        if self.fail_off and not on:
            raise WorkerError(f"{self.label} off: failed on purpose")
        draw = random.Random(f"{self.key}{on}{workload}")
        sampling = workload.sampling
        centre = self.ns * (1 if on else self.slowdown) * (1 + workload.operation.message_bytes / 1000)
        rounds = [{"iterations": 1000, "ns": 1000 * centre * (1 + draw.gauss(0, self.noise))}
                  for _ in range(sampling.rounds * sampling.forks)]
        return Measurement(engine=self.label, implementation=f"{self.label} 1.0", setting="on" if on else "off",
                           accelerated=on, as_requested=True, verified_state="fake", **workload.row_fields(),
                           summary=summarize(rounds, sampling.forks), ciphertext=None)


@pytest.fixture
def engines(monkeypatch):
    """Registers fakes: a subject (no reference rank), two references and a wrapper of the first one."""
    fakes = {"subject": FakeEngine("subject", 100.0), "c": FakeEngine("c", 50.0, rank=1, shapes=("stream",)),
             "py": FakeEngine("py", 500.0, rank=2, wraps="c")}
    fakes["subject"].per_implementation = True  # as the JVM: a ratio per JDK
    for key, engine in fakes.items():
        monkeypatch.setitem(ENGINES, key, engine)
    return fakes


def workloads(**sampling):
    return combinations([(128, "cbc")], ["encrypt"], [16, 1024], ["message"], Sampling(**{"rounds": 5, **sampling}))


def test_plan_runs_each_engine_in_its_settings_and_an_unrunnable_shape_once_in_its_own(engines):
    jobs = plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message", "stream"], Sampling(rounds=5)),
                Matrix(engines=("subject", "c")))
    assert [job.label for job in jobs] == [
        "fake subject, on, message", "fake subject, off, message", "fake c, on", "fake c, off",
        "fake subject, on, stream", "fake subject, off, stream"]
    assert {job.workload.operation.shape for job in jobs if job.label.startswith("fake c")} == {"stream"}


def test_ratios_pair_each_engine_on_and_off_and_the_subject_with_the_best_reference(engines, tmp_path):
    comparison = run(plan(workloads(), Matrix(engines=("subject", "c", "py"))), output=tmp_path / "run.jsonl")
    by_label = {r.label: r for r in comparison.ratios}
    speedup = by_label["fake acceleration speedup, fake subject 1.0, 16 B"]
    assert speedup.kind is RatioKind.SPEEDUP and speedup.significant
    assert speedup.low < 4.0 < speedup.high and speedup.value == pytest.approx(4.0, rel=0.01)
    # Against rank 1 ("c"), never rank 2; "c" runs streams only, and the label says the shapes differ.
    versus = by_label["fake subject vs fake c, acceleration on, fake subject 1.0 (message against stream shape), 1024 B"]
    assert versus.kind is RatioKind.VERSUS and versus.value == pytest.approx(0.5, rel=0.01)
    assert not any("vs fake py" in label for label in by_label)


def test_a_wrapper_many_times_slower_than_what_it_wraps_is_said_to_measure_itself(engines, tmp_path):
    comparison = run(plan(workloads(), Matrix(engines=("c", "py"))), output=tmp_path / "run.jsonl")
    frame = comparison.frame
    noted = {frame.at[i, "message_bytes"]: note for i, note in comparison.overhead.items()}
    assert set(noted) == {16, 1024} and len(comparison.overhead) == 4  # both sizes, on and off
    assert noted[16].kind is NoteKind.PYTHON_OVERHEAD and noted[16].text.startswith("dominated by wrapper overhead: 10x")


def test_a_failed_configuration_is_recorded_and_the_others_kept_and_saved_as_reported(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "flaky", FakeEngine("flaky", 100.0, fail_off=True))
    saved = tmp_path / "run.jsonl"
    comparison = run(plan(workloads(), Matrix(engines=("flaky",))), output=saved)
    assert [label for label, _ in comparison.failures] == ["fake flaky, off, 16 B", "fake flaky, off, 1024 B"]
    assert len(comparison.results) == 2
    reported = json.loads(render("compare", "json", comparison))
    loaded = read([saved])
    # What --format json prints is what the file holds, row for row.
    assert [{k: v for k, v in row.items() if k != "run_id"} for row in loaded.rows] == reported["results"]
    assert [f["configuration"] for f in loaded.failures] == [label for label, _ in comparison.failures]


def test_a_hint_for_many_noisy_rows_is_printed_once_naming_them(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "noisy", FakeEngine("noisy", 100.0, noise=0.2))
    comparison = run(plan(workloads(target_error=0.001), Matrix(engines=("noisy",))), output=tmp_path / "run.jsonl")
    table = render("compare", "table", comparison)
    assert table.count("more --max-forks, a longer --round-time or a quieter machine helps") == 1
    assert "  rows 1, 2, 3, 4: more --max-forks" in table
    assert all(any(n["kind"] == "imprecise" for n in row.notes) for row in comparison.frame.itertuples())


def test_a_single_sample_has_no_interval_and_its_ratios_are_not_significant(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    comparison = run(plan(workloads(rounds=1, forks=1, max_forks=1), Matrix(engines=("one",))),
                     output=tmp_path / "run.jsonl")
    assert comparison.frame.ns_per_op_error.isna().all()
    assert all(not r.significant and math.isinf(r.high) for r in comparison.ratios)
    assert "rows 1, 2, 3, 4: more --rounds or --forks helps" in render("compare", "table", comparison)


def test_an_emulated_cpu_is_said_once_above_the_figures(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    comparison = run(plan(workloads(), Matrix(engines=("one",))), output=tmp_path / "run.jsonl")
    assert "EMULATED" not in render("compare", "table", comparison)
    comparison.metadata["cpu"]["emulation"] = "qemu-user (an aarch64 process on an x86 host)"
    table = render("compare", "table", comparison)
    assert table.count("EMULATED qemu-user") == 1 and table.index("EMULATED") < table.index("ns/op")
