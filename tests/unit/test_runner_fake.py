"""The runner, ratios, notes and the compare report on fake engines: seconds, no JVM, no OpenSSL.

The engines here are fakes on purpose (FakeEngine in tests/helpers.py, and variants below): they
test what sits around engines (planning, saving, failures, statistics, ratios, rendering), never
an engine itself.
"""
from __future__ import annotations

import itertools
import json
import math
import random
import re
from pathlib import Path

import pytest
from helpers import FakeEngine, run_cli_here, workloads

from jvmbridge.comparison.interleaved import LABEL as INTERLEAVED
from jvmbridge.comparison.ratios import RatioKind
from jvmbridge.comparison.runner import plan, run, saved_comparison
from jvmbridge.engines import ENGINES, Matrix
from jvmbridge.forks.parent import ChildOutcome
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.render import render
from jvmbridge.results import Measurement, NoteKind
from jvmbridge.sampling.policy import FORK_LIMIT, FORKS, Sampling
from jvmbridge.sampling.workload import combinations
from jvmbridge.saved.store import read
from jvmbridge.stats.summary import summarize


@pytest.fixture
def engines(monkeypatch):
    """Registers fakes: a subject (no reference rank), two references and a wrapper of the first one."""
    fakes = {"subject": FakeEngine("subject", 100.0), "c": FakeEngine("c", 50.0, rank=1, shapes=("stream",)),
             "py": FakeEngine("py", 500.0, rank=2, wraps="c")}
    fakes["subject"].per_implementation = True  # as the JVM: a ratio per JDK
    for key, engine in fakes.items():
        monkeypatch.setitem(ENGINES, key, engine)
    return fakes


def test_plan_runs_each_engine_in_its_settings_and_an_unrunnable_shape_once_in_its_own(engines):
    jobs = plan(combinations([(128, "cbc")], ["encrypt"], [16], ["message", "stream"], Sampling(rounds=5)),
                Matrix(engines=("subject", "c")))
    # "c" runs streams only: its rows sit by the subject's stream rows, once. One job, for the conductor.
    assert [part.label for job in jobs for part in sorted(job.parts, key=lambda part: part.rank)] == [
        "fake subject, on, message", "fake subject, off, message", "fake subject, on, stream",
        "fake subject, off, stream", "fake c, on, stream", "fake c, off, stream"]
    assert {part.workload.operation.shape for job in jobs for part in job.parts if part.label.startswith("fake c")} == {
        "stream"}


def _runs(jobs) -> set[tuple[str, str]]:
    return {(part.label.split(",")[0], part.workload.operation.shape) for job in jobs for part in job.parts}


def test_unnamed_shapes_give_each_shape_one_reference_the_one_made_for_it(engines, monkeypatch, tmp_path):
    """As the C loop (messages) and `openssl speed` (its stream) by default: "py", made for messages,
    leaves its stream to "c", made for streams, though it ranks after "c"; named shapes run everywhere;
    and where "c" cannot run in slices (as `openssl speed` with --iterations), "py" keeps its stream."""
    monkeypatch.setattr(engines["c"], "reference_shapes", ("stream",))
    monkeypatch.setattr(engines["py"], "reference_shapes", ("message",))
    for fake in engines.values():  # as the JVM's and the C loop's: their rows pair slice by slice
        monkeypatch.setattr(fake, "slices", lambda workloads, matrix: True)
    engines["py"].wraps = None  # as a reference of its own, not a wrapper of "c"
    asked = combinations([(128, "cbc")], ["encrypt"], [16], ["message", "stream"], Sampling(rounds=5, forks=3))
    by_default = plan(asked, Matrix(engines=("subject", "c", "py"), shapes_named=False))
    assert _runs(by_default) == {("fake subject", "message"), ("fake subject", "stream"), ("fake c", "stream"),
                                 ("fake py", "message")}
    assert ("fake py", "stream") in _runs(plan(asked, Matrix(engines=("subject", "c", "py"))))
    monkeypatch.setattr(engines["c"], "slices", lambda workloads, matrix: False)
    assert ("fake py", "stream") in _runs(plan(asked, Matrix(engines=("subject", "c", "py"), shapes_named=False)))
    versus = [r.label for r in run(by_default, output=tmp_path / "run.jsonl").ratios if " vs " in r.label]
    assert sorted(versus) == ["fake subject vs fake c, acceleration off, stream shape",
                              "fake subject vs fake c, acceleration on, stream shape",
                              "fake subject vs fake py, acceleration off, message shape",
                              "fake subject vs fake py, acceleration on, message shape"]


def test_the_jvm_is_held_against_a_reference_whose_slices_paired_with_its_own_first():
    """`openssl speed` is made for the stream, but with --iterations it runs in turns: the C loop's
    stream, in the same slices as the JVM's, is then the reference."""
    from jvmbridge.engines import ENGINES, reference_for

    c_loop, speed, pyca = ENGINES["c-loop"], ENGINES["openssl-cli"], ENGINES["pyca"]
    assert reference_for("stream", [c_loop, speed, pyca]) is speed
    assert reference_for("message", [c_loop, speed, pyca]) is c_loop
    assert reference_for("stream", [c_loop, speed, pyca], paired=[c_loop]) is c_loop
    assert reference_for("message", [speed, pyca]) is speed  # none made for it: by rank


def test_which_engines_run_in_slices_and_which_in_turns():
    from jvmbridge.engines import ENGINES

    def slicing(**sampling) -> list[str]:
        asked = combinations([(256, "cbc")], ["encrypt"], [38], ["message", "stream"], Sampling(**sampling))
        return [key for key, engine in ENGINES.items() if engine.slices(asked, Matrix())]

    assert slicing() == ["jvm", "c-loop", "pyca", "openssl-cli", "openssl-aead"]
    assert slicing(iterations=10**6) == ["jvm", "c-loop", "pyca"]  # openssl speed cannot run a given count


def test_ratios_pair_each_engine_on_and_off_and_the_subject_with_the_best_reference(engines, tmp_path):
    comparison = run(plan(workloads(), Matrix(engines=("subject", "c", "py"))), output=tmp_path / "run.jsonl")
    by_label = {r.label: r for r in comparison.ratios}
    speedup = by_label["fake acceleration speedup, fake subject, 16 B"]
    assert speedup.kind is RatioKind.SPEEDUP and speedup.significant
    assert speedup.low < 4.0 < speedup.high and speedup.value == pytest.approx(4.0, rel=0.01)
    # Against rank 1 ("c"), never rank 2; "c" runs streams only, and the label says the shapes differ.
    versus = by_label["fake subject vs fake c, acceleration on (message against stream shape), 1024 B"]
    assert versus.kind is RatioKind.VERSUS and versus.value == pytest.approx(0.5, rel=0.01)
    assert not any("vs fake py" in label for label in by_label)


def test_each_headline_line_names_its_size_where_the_run_has_several(engines, tmp_path):
    from jvmbridge.comparison.headline import headline

    comparison = run(plan(workloads(), Matrix(engines=("subject", "c"))), output=tmp_path / "run.jsonl")
    lines = [line for line in headline(comparison.ratios, comparison.frame, comparison.metadata)
             if not line.startswith("...")]
    # Before, two sizes' speedups read alike but for their figures: "fake subject, messages: ...".
    assert {re.search(r", (16|1024) B: ", line)[1] for line in lines} == {"16", "1024"}, lines


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
    # What --format json prints is what the file holds, row for row (beside it: the run, the row's place).
    assert [{k: v for k, v in row.items() if k not in ("run_id", "position", "job")} for row in loaded.rows] == reported["results"]
    assert [f["configuration"] for f in loaded.failures] == [label for label, _ in comparison.failures]


def test_a_single_sample_has_no_interval_and_its_ratios_are_not_significant(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    comparison = run(plan(workloads(rounds=1, forks=1, max_forks=1), Matrix(engines=("one",))),
                     output=tmp_path / "run.jsonl")
    assert comparison.frame.ns_per_op_error.isna().all()
    assert all(not r.significant and math.isinf(r.high) for r in comparison.ratios)
    comparison.verbose = True  # notes on sampling, which the default table only counts
    assert "rows 1, 2, 3, 4: more --forks helps" in render("compare", "table", comparison)


def test_two_forks_of_one_round_show_their_range_not_a_useless_interval(monkeypatch, tmp_path):
    # AESNITester's shape: each fork is one whole run; its +-5630% helped no one.
    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0, noise=0.02))
    comparison = run(plan(workloads(rounds=1, forks=2, max_forks=2), Matrix(engines=("one",), interleaved=False)),
                     output=tmp_path / "run.jsonl")
    row = comparison.frame.iloc[0]
    assert math.isfinite(row.ns_per_op_error)  # the data keeps the figure's t(0.975, 1) interval
    (note,) = [n for n in row.notes if n["kind"] == "few-samples"]
    low, high = min(row.fork_ns_per_op), max(row.fork_ns_per_op)
    assert note["text"] == (f"only 2 fork(s): too few for a 95% interval over forks to mean anything, so none is "
                            f"shown; they range {low:,.1f}-{high:,.1f} ns/op; 1 more fork(s) (--forks 3) would give one")
    table = render("compare", "table", comparison).splitlines()
    first = next(line for line in table if line.startswith("1 "))
    assert " n/a " in first and "%" not in first.split("n/a")[0].split()[-1]
    assert first.split(" n/a ")[1].split()[0] == "-"  # rsd: forks of one round show no spread inside one


def run_one(monkeypatch, tmp_path, engine: FakeEngine, sampling: Sampling):
    """A run of ``engine`` alone (registered under its key) on one 16-byte workload, in turns (--rounds slices a fork)."""
    monkeypatch.setitem(ENGINES, engine.key, engine)
    one = combinations([(128, "cbc")], ["encrypt"], [16], ["message"], sampling)
    return run(plan(one, Matrix(engines=(engine.key,), interleaved=False)), output=tmp_path / "run.jsonl")


class SpareRoundsEngine(FakeEngine):
    """A fake whose "on" forks ran spare rounds, as forks.measure.timed_rounds adds for disturbed ones:
    fork i has i more than planned."""

    def measurement(self, on, workload, outcomes, failed):
        measured = super().measurement(on, workload, outcomes, failed)
        if on:
            forks = [[{"iterations": 1000, "ns": 1000 * self.ns}] * (workload.sampling.rounds + fork)
                     for fork in range(workload.sampling.forks)]
            measured.summary = summarize(forks, workload.sampling.forks)
        return measured


def test_samples_show_the_range_of_rounds_per_fork_where_forks_ran_spare_rounds(monkeypatch, tmp_path):
    comparison = run_one(monkeypatch, tmp_path, SpareRoundsEngine("spare", 100.0), Sampling(rounds=4, forks=3, max_forks=3))
    table = render("compare", "table", comparison).splitlines()
    header = next(line for line in table if line.startswith("#  "))
    at = header.index("samples")
    assert [line[at:].split()[0] for line in table if line[:2] in ("1 ", "2 ")] == ["3x4-6", "3x4"]  # 15 rounds, 12
    # JMH's one count a fork is the rounds each was asked for (15 // 3 would say 5); rawData keeps them all.
    on, off = json.loads(render("compare", "jmh", comparison))
    assert on["measurementIterations"] == off["measurementIterations"] == 4
    assert [len(fork) for fork in on["primaryMetric"]["rawData"]] == [4, 5, 6]


def strict_json(text: str):
    """json.loads as JavaScript's JSON.parse reads: NaN and Infinity are no JSON."""
    def refuse(constant: str):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_json_documents_and_saved_runs_are_strict_json_with_null_for_what_is_not_defined(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    saved = tmp_path / "run.jsonl"
    comparison = run(plan(workloads(rounds=1, forks=1, max_forks=1), Matrix(engines=("one",))), output=saved)
    assert any(math.isinf(r.high) for r in comparison.ratios)  # a bound that is not defined
    document = strict_json(render("compare", "json", comparison))
    assert all(ratio["high"] is None for ratio in document["ratios"])
    assert "null" in document["units"]
    for line in saved.read_text().splitlines():
        strict_json(line)


def test_an_emulated_cpu_is_said_once_above_the_figures(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    comparison = run(plan(workloads(), Matrix(engines=("one",))), output=tmp_path / "run.jsonl")
    assert "EMULATED" not in render("compare", "table", comparison)
    comparison.metadata["cpu"]["emulation"] = "qemu-user (an aarch64 process on an x86 host)"
    table = render("compare", "table", comparison)
    assert table.count("EMULATED qemu-user") == 1 and table.index("EMULATED") < table.index("ns/op")


def test_a_cliff_between_adjacent_sizes_is_named_with_its_interval(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "smooth", FakeEngine("smooth", 100.0))
    monkeypatch.setitem(ENGINES, "cliff", FakeEngine("cliff", 100.0, slow_below=8192))
    sizes = combinations([(128, "gcm")], ["encrypt"], [1024, 8191, 8192, 65536], ["message"], Sampling(rounds=5))
    comparison = run(plan(sizes, Matrix(engines=("smooth", "cliff"))), output=tmp_path / "run.jsonl")
    # Only the path that changes at 8 KiB, on and off; a smooth cost per byte is no cliff.
    assert [(c.configuration.split(" |")[0], c.smaller, c.larger) for c in comparison.cliffs] == [
        ("fake cliff", 8191, 8192), ("fake cliff", 8191, 8192)]
    (cliff, _) = comparison.cliffs
    assert cliff.what == "a larger message takes less time" and cliff.low > 9 and cliff.times == pytest.approx(10, rel=0.01)
    table = render("compare", "table", comparison)
    assert "fake cliff | on | aes-128-gcm encrypt, message: from 8,191 to 8,192 B a larger message takes less time 10.00x" in table
    assert "Forks    one process per fork" not in table  # the fakes run a workload per job
    assert json.loads(render("compare", "json", comparison))["cliffs"][0]["larger_bytes"] == 8192


class NotedEngine(FakeEngine):
    """A fake whose rows carry the engine's own note (the same on every row) beside the run's."""

    def measurement(self, on, workload, outcomes, failed):
        measured = super().measurement(on, workload, outcomes, failed)
        measured.notes = ["one loop per message, timed inside"]
        return measured


def test_a_note_rows_share_is_printed_once_after_them_and_each_rows_own_on_its_line(monkeypatch, tmp_path):
    monkeypatch.setattr("jvmbridge.comparison.runner.shared_text", lambda load: None)  # whatever else runs here
    comparison = run_one(monkeypatch, tmp_path, NotedEngine("noted", 100.0), Sampling(rounds=3, forks=2, max_forks=2))
    comparison.verbose = True  # every note, as -v shows them
    table = render("compare", "table", comparison)
    notes = table[table.index("Notes:"):].splitlines()[1:4]
    assert notes[0] == "  1, 2  one loop per message, timed inside"
    assert notes[1].startswith("     1  only 2 fork(s): too few")  # each row's own range
    assert notes[2].startswith("     2  only 2 fork(s): too few")
    assert table.count("one loop per message") == 1


def test_a_rows_levels_are_shown_where_its_forks_were_its_own_and_counted_where_they_were_interleaved(
        monkeypatch, tmp_path):
    """Interleaved, the answers are ratios and no fork runs for a row: its forks' levels are how it
    was sampled (-v shows them). A row whose own forks ran in turns says them under the table."""
    comparison = run_one(monkeypatch, tmp_path, NotedEngine("noted", 100.0), Sampling(rounds=3, forks=2, max_forks=2))
    levels = {"kind": NoteKind.LEVELS.value, "text": "2 levels: 99.0 ns/op in 2 forks, 103.0 in 3 forks"}
    frame = comparison.frame.astype({"interleaved": object})
    frame.at[0, "notes"], frame.at[1, "notes"] = [levels], [levels]
    frame.at[0, "interleaved"], frame.at[1, "interleaved"] = True, None
    comparison.frame = frame
    notes = render("compare", "table", comparison).split("Notes:")[1]
    assert "\n  2  2 levels: 99.0 ns/op" in notes and "1  2 levels" not in notes, notes
    assert "(1 notes on how rows were sampled: -v shows them" in notes
    comparison.verbose = True
    assert "  1, 2  2 levels: 99.0 ns/op" in render("compare", "table", comparison)


def test_report_lists_a_runs_rows_as_compare_printed_them_whatever_order_they_finished_in(engines, tmp_path):
    from jvmbridge.report.history import compare_runs, configuration, tidy_frame

    path = tmp_path / "run.jsonl"
    comparison = run(plan(workloads(), Matrix(engines=("subject", "py"))), output=path)
    header, *rows, end = path.read_text().splitlines()
    path.write_text("\n".join([header, *reversed(rows), end]) + "\n")  # as if they finished the other way round
    shown = list(compare_runs(tidy_frame(read([path]))).table.configuration)
    assert shown == [configuration(row) for row in comparison.frame.itertuples()]


def test_report_compares_with_the_baseline_asked_for_a_column_or_a_file(engines, tmp_path):
    from jvmbridge.report.history import compare_runs, tidy_frame

    paths = [tmp_path / "before.jsonl", tmp_path / "after.jsonl"]
    for path in paths:
        run(plan(workloads(), Matrix(engines=("subject",))), output=path)
    frame = tidy_frame(read(paths))
    assert "run 2 vs run 1" in compare_runs(frame).table.columns  # the first column by default
    for baseline in ("run 2", str(paths[1]), "after.jsonl"):
        table = compare_runs(frame, "run", baseline).table
        assert "run 1 vs run 2" in table.columns and "run 2 vs run 1" not in table.columns
    with pytest.raises(ValueError, match="names no column; the columns are run 1, run 2"):
        compare_runs(frame, "run", "run 3")


def test_an_empty_message_beside_others_has_no_cost_per_byte_but_can_show_a_cliff(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "cliff", FakeEngine("cliff", 100.0, slow_below=16))
    sizes = combinations([(128, "cbc")], ["encrypt"], [0, 16], ["message"], Sampling(rounds=5))
    comparison = run(plan(sizes, Matrix(engines=("cliff",))), output=tmp_path / "run.jsonl")  # divided by 0 bytes before
    assert [(c.smaller, c.larger, c.what) for c in comparison.cliffs] == [(0, 16, "a larger message takes less time")] * 2


def test_a_shared_jvm_setting_is_one_job_measuring_every_workload_and_rows_keep_the_report_order(engines):
    java = JavaInstall(Path("/opt/jdk-17"), Path("/opt/jdk-17/lib/server/libjvm.so"), "17.0.15")
    sweep = combinations([(128, "cbc")], ["encrypt", "decrypt"], [16, 1024], ["message"], Sampling(rounds=5))
    jobs = plan(sweep, Matrix(javas=(java,), engines=("jvm", "c"), shared_jvm=True, interleaved=False))
    jvm_jobs = [job for job in jobs if job.engine == "jvm"]
    # One JVM per fork for all four workloads (the fake engine's worker too), each engine's settings in turns.
    assert [job.label for job in jvm_jobs] == ["JVM, each setting in turns"]
    assert [(len(job.parts), job.parts_per_fork) for job in jobs] == [(8, 4), (8, 4)]
    # Rows come back in the per-workload order: each size's JVM rows, then its native ones.
    ranked = sorted((part.rank, part.label) for job in jobs for part in job.parts)
    assert [label for _, label in ranked][:4] == [
        "JVM jdk-17 (17.0.15), SunJCE, intrinsics on, encrypt, 16 B",
        "JVM jdk-17 (17.0.15), SunJCE, intrinsics off, encrypt, 16 B", "fake c, on, encrypt, 16 B",
        "fake c, off, encrypt, 16 B"]
    assert all(job.shares_jit for job in jvm_jobs)
    # By default a JVM per workload and setting, as JMH forks per @Param.
    isolated = plan(sweep, Matrix(javas=(java,), engines=("jvm",), interleaved=False))
    assert [(len(job.parts), job.parts_per_fork) for job in isolated] == [(8, 1)]
    # Interleaved (the default): one job for every setting of every engine that runs slices, a
    # worker (a JVM) per setting and workload unless --shared-jvm; the rest as before.
    (together,) = [job for job in plan(sweep, Matrix(javas=(java,), engines=("jvm", "c"))) if job.label == INTERLEAVED]
    assert [setting.name for key, setting in together.settings if key == "jvm"] == [
        "JVM jdk-17 (17.0.15), SunJCE, intrinsics on"] * 4 + ["JVM jdk-17 (17.0.15), SunJCE, intrinsics off"] * 4
    assert len(together.parts) == 16 and not together.shares_jit


@pytest.mark.parametrize("shares_jit", [True, False])
def test_the_header_says_once_when_workloads_shared_a_jit(engines, tmp_path, shares_jit):
    from jvmbridge.comparison.interleaved import interleaved_job

    shared = engines["subject"].setting(True, [(w, f", {w.operation.message_bytes} B") for w in workloads()])
    job = interleaved_job([("subject", shared)], Matrix())
    job.shares_jit = shares_jit
    table = render("compare", "table", run([job], output=tmp_path / "run.jsonl"))
    assert table.count("Forks    one process per fork measures up to 2 workloads") == 1
    assert ("in a shared JVM (--shared-jvm) each after the first runs on code the JIT compiled" in table) is shares_jit


def test_report_keeps_every_shape_apart_and_shows_the_latest_run_of_a_repeat(monkeypatch, tmp_path):
    from jvmbridge.report.history import compare_runs, tidy_frame

    monkeypatch.setitem(ENGINES, "c", FakeEngine("c", 50.0, shapes=("message", "stream")))
    both = combinations([(128, "cbc")], ["encrypt"], [38], ["message", "stream"], Sampling(rounds=5))
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    run(plan(both, Matrix(engines=("c",))), output=first)
    monkeypatch.setitem(ENGINES, "c", FakeEngine("c", 60.0, shapes=("message", "stream")))  # the later run, slower
    run(plan(both, Matrix(engines=("c",))), output=second)
    records = [json.loads(line) for line in second.read_text().splitlines()]
    records[0]["metadata"]["started_utc"] = "2099-01-01T00:00:00+00:00"  # both started within one second
    second.write_text("".join(json.dumps(record) + "\n" for record in records))
    one = compare_runs(tidy_frame(read([first])))
    assert len(one.table) == 4 and not [n for n in one.notes if "repeat a configuration" in n]
    assert {c.split(" | ")[-1] for c in one.table.configuration} == {"aes-128-cbc 38 B message",
                                                                     "aes-128-cbc 38 B stream"}
    # Two runs of the same configurations in one column (--columns setting): the later one is shown.
    by_setting = compare_runs(tidy_frame(read([second, first])), columns="setting")
    assert [n for n in by_setting.notes if "repeat a configuration" in n]
    shown = by_setting.table.iloc[:, 1].dropna()
    assert all(value > 55 for value in shown)  # 60-ish: the second run's, whichever file came first


def test_jmhs_pooled_figure_is_a_column_when_asked_for_and_labelled_as_jmhs(engines, tmp_path):
    comparison = run(plan(workloads(), Matrix(engines=("subject",))), output=tmp_path / "run.jsonl")
    assert "JMH score" not in render("compare", "table", comparison)
    comparison.jmh_columns = True
    table = render("compare", "table", comparison).splitlines()
    header = next(line for line in table if line.startswith("#"))
    assert header.split()[-3:] == ["JMH", "score", "±99.9%"]
    first = comparison.frame.iloc[0]
    row = next(line for line in table if line.startswith("1 "))
    assert row.split()[-2:] == [f"{first.jmh_score:,.1f}", f"{first.jmh_error / first.jmh_score:.1%}"]
    assert any(line.startswith("JMH score: JMH's figure") for line in table)


def test_rows_that_differ_only_in_the_users_options_are_configurations_of_their_own():
    import pandas as pd

    from jvmbridge.report.history import compare_runs

    base = dict(engine="OpenSSL speed (C loop)", implementation="OpenSSL 3", setting="AES-NI on", accelerated=True,
                cipher="aes-256-cbc", direction="encrypt", shape="stream", message_bytes=16, threads=1,
                ns_per_op=10.0, ns_per_op_error=0.1, run_id="r1", started_utc="2026-12-01T10:00:00+00:00", host="h",
                file="a.jsonl", published=None, cpu_model="EPYC", cpu_features="aes", cores=2, statistic="s")
    rows = [base, dict(base, openssl_args="-engine fast", ns_per_op=8.0),  # one run, with and without an engine
            dict(base, run_id="r2", started_utc="2026-12-01T11:00:00+00:00", ns_per_op=10.5)]
    compared = compare_runs(pd.DataFrame(rows))
    assert list(compared.table.configuration) == [
        "OpenSSL speed (C loop) | AES-NI on | aes-256-cbc 16 B [no --openssl-arg]",
        "OpenSSL speed (C loop) | AES-NI on | aes-256-cbc 16 B [-engine fast]"]
    assert list(compared.table["run 1 ns/op"]) == [10.0, 8.0]  # neither dropped as a repeat
    assert not any("repeat a configuration" in note for note in compared.notes)


def test_a_table_wider_than_the_terminal_leaves_out_the_least_needed_columns_and_says_which(engines, tmp_path):
    comparison = run(plan(workloads(), Matrix(engines=("subject", "c", "py"))), output=tmp_path / "run.jsonl")
    full = render("compare", "table", comparison).splitlines()
    header = next(line for line in full if line.split()[:2] == ["#", "engine"])
    assert len(header) > 120 and "openssl 1000s B/s" in header
    fitted = render("compare", "table", comparison, width=120).splitlines()
    table = [line for line in fitted if line.split()[:2] == ["#", "engine"] or line[:1].isdigit() and "  " in line]
    assert table and all(len(line) <= 120 for line in table)
    kept = next(line for line in fitted if line.split()[:2] == ["#", "engine"]).split()
    assert {"ns/op", "±95%", "MB/s", "engine", "setting"} <= set(kept) and "1000s" not in kept
    said = next(line for line in fitted if line.startswith("(--wide shows "))
    assert said.startswith("(--wide shows ") and "more columns: openssl 1000s B/s, ops/s" in said and len(said) <= 120
    assert len(table) == len([line for line in full if line.split()[:2] == ["#", "engine"] or line[:1].isdigit()
                              and "  " in line])  # every row still there


def test_a_fitted_table_of_two_shapes_keeps_the_shape_that_tells_its_rows_apart(monkeypatch, tmp_path):
    monkeypatch.setitem(ENGINES, "c", FakeEngine("c", 50.0, shapes=("message", "stream")))
    shapes = combinations([(128, "cbc")], ["encrypt"], [16], ["message", "stream"], Sampling(rounds=5))
    comparison = run(plan(shapes, Matrix(engines=("c",))), output=tmp_path / "run.jsonl")
    fitted = render("compare", "table", comparison, width=60).splitlines()  # narrow: every expendable column goes
    kept = next(line for line in fitted if line.split()[:2] == ["#", "engine"]).split()
    assert "shape" in kept and "cipher" not in kept  # one cipher: the header names it


def test_runs_named_at_compare_are_reports_columns_in_the_order_they_ran(engines, tmp_path):
    from jvmbridge.report.history import compare_runs, tidy_frame

    paths = []
    for name in ("zulu", "alpha", "alpha", None):  # not in alphabetical order; one name twice; one unnamed
        paths.append(tmp_path / f"run{len(paths)}.jsonl")
        run(plan(workloads(), Matrix(engines=("c",))), output=paths[-1], name=name)
    frame = tidy_frame(read(paths))
    comparison = compare_runs(frame, "run")
    assert comparison.columns == ["zulu", "alpha (run 2)", "alpha (run 3)", "run 4"]
    assert [c for c in comparison.table.columns if " vs " in c] == [
        "alpha (run 2) vs zulu", "alpha (run 3) vs zulu", "run 4 vs zulu"]
    assert comparison.notes[0].startswith("zulu: ") and comparison.notes[3].startswith("run 4: ")
    against = compare_runs(frame, "run", "alpha (run 3)")  # --baseline by the name the header shows
    assert against.baseline == "alpha (run 3)" and "zulu vs alpha (run 3)" in against.table.columns


def test_report_writes_several_runs_as_jmh_results_each_named_by_its_run(engines, tmp_path):
    paths = []
    for name in ("before", "after"):
        paths.append(tmp_path / f"{name}.jsonl")
        run(plan(workloads(), Matrix(engines=("c",))), output=paths[-1], name=name)
    done = run_cli_here("report", *map(str, paths), "--format", "jmh")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    rows = len(read(paths).rows)
    assert rows >= 4 and len(results) == rows  # every row of both runs, in the order they ran
    assert [r["params"]["run"] for r in results] == ["before"] * (rows // 2) + ["after"] * (rows // 2)
    # Tools that read JMH results key them by benchmark and params: none merged.
    assert len({(r["benchmark"], json.dumps(r["params"], sort_keys=True)) for r in results}) == rows
    assert all(r["primaryMetric"]["scoreUnit"] == "ns/op" and r["measurementTime"] == f"{Sampling().round_seconds:g} s"
               for r in results)
    # One run is written as compare wrote it: no run param.
    one = run_cli_here("report", str(paths[0]), "--format", "jmh")
    assert one.returncode == 0, one.stderr
    assert [r["params"] for r in json.loads(one.stdout)] == [{k: v for k, v in r["params"].items() if k != "run"}
                                                             for r in results[:rows // 2]]


def test_a_report_wider_than_the_terminal_wraps_its_columns_into_blocks_never_a_row(engines, tmp_path):
    from jvmbridge.render.runs import RunsDocument
    from jvmbridge.report.history import compare_runs, tidy_frame

    paths = [tmp_path / f"run{i}.jsonl" for i in range(6)]
    for path in paths:
        run(plan(workloads(), Matrix(engines=("c",))), output=path)
    comparison = compare_runs(tidy_frame(read(paths)), "run")
    whole = render("runs", "table", RunsDocument(comparison)).splitlines()
    assert len(whole[0]) > 120
    lines = render("runs", "table", RunsDocument(comparison), width=120).splitlines()
    table = lines[:lines.index(next(line for line in lines if line.startswith("Note:")))]
    assert all(len(line) <= 120 for line in table)
    blocks = [block.splitlines() for block in "\n".join(table).split("\n\n")]
    assert len(blocks) > 1
    rows = len(comparison.table)
    assert all(len(block) == 1 + rows for block in blocks)  # every block: the header and every configuration
    headers = [name for block in blocks for name in re.split(r"\s{2,}", block[0])[1:]]
    assert headers == list(comparison.table.columns[1:])  # every column once, in order
    assert all(" vs " not in re.split(r"\s{2,}", block[0])[1] for block in blocks)  # a figure leads each block


def test_a_significant_ratio_near_one_keeps_the_decimal_that_shows_which_way():
    from jvmbridge.comparison.headline import _versus
    from jvmbridge.comparison.ratios import Ratio, RatioKind

    def line(value: float) -> str:
        return _versus(Ratio(kind=RatioKind.VERSUS, label="", value=value, low=value * 0.999, high=value * 1.001,
                             significant=True, of="JVM", against="OpenSSL C loop", shape="stream"))

    assert line(0.996).endswith(": 1.004x slower (±0.1%)")
    assert line(1.17).endswith(": 1.17x faster (±0.1%)")


def test_with_iterations_the_run_says_its_work_each_rows_messages_at_its_speed_those_timed_where_it_runs_a_time(
        engines, monkeypatch, tmp_path):
    monkeypatch.setattr(engines["c"], "runs_a_count", False)  # as openssl speed: it counts what it did in a time
    jobs = plan(workloads(iterations=10**6, forks=2), Matrix(engines=("subject", "c")))
    comparison = run(jobs, output=tmp_path / "run.jsonl")
    counted = [row.estimate.ns_per_op * 10**6 for row in comparison.results if row.engine == "fake subject"]
    timed = [row.estimate.ns_per_op * row.iterations for row in comparison.results if row.engine != "fake subject"]
    assert len(counted) == len(timed) == 4
    assert comparison.metadata["work_seconds"] == pytest.approx((sum(counted) + sum(timed)) / 1e9)
    assert comparison.metadata["workload"]["budget"].startswith("1,000,000 messages of each row, 500,000 a fork")
    work = next(line for line in render("compare", "table", comparison).splitlines() if line.startswith("Work"))
    assert work.startswith("Work     1,000,000 messages of each row (those timed where it runs for a time) at its "
                           f"ns/op: {(sum(counted) + sum(timed)) / 1e9:.1f} s")
    assert run(plan(workloads(forks=2), Matrix(engines=("subject",))), output=tmp_path / "timed.jsonl"
               ).metadata["work_seconds"] is None  # timed rounds: no work was asked


class SlicedFake:
    """A fake conductor worker (conductor.conduct.Worker) of one part: slices at ``ns`` with a spread
    of 0.3% between forks and 0.5% between slices, and in a fork of ``slowed`` (fork -> factor) at
    that factor: a host episode (every row by its own amount) or the JIT's slower way (one row)."""

    def __init__(self, fork: int, ns: float, slowed: dict[int, float]):
        draw = random.Random(f"{ns}/{fork}")
        self.ns, self.draw = ns * slowed.get(fork, 1.0) * math.exp(draw.gauss(0, 0.003)), draw

    def ready(self) -> dict:
        return {"fake": True}

    def aside(self) -> None:
        pass

    def warm(self, part: int, min_seconds: float, max_seconds: float) -> dict:
        return {"ns_per_op": self.ns, "iterations": 1, "seconds": 0.0, "steady": True, "chunks": []}

    def slice(self, part: int, iterations: int, expected_seconds: float) -> dict:
        return {"iterations": iterations, "ns": iterations * self.ns * (1 + abs(self.draw.gauss(0, 0.005))),
                "wait_ns": 0}

    def finish(self) -> list[dict]:
        return [{}]

    def ended(self) -> ChildOutcome:
        return ChildOutcome(result=None, returncode=0, stdout="", stderr="")

    def stop(self) -> None:
        pass


class FaultyFake(SlicedFake):
    """A SlicedFake whose slice meets a fault of jvmbridge's own (a bug), not a WorkerError."""

    def slice(self, part: int, iterations: int, expected_seconds: float) -> dict:
        raise KeyError("sizes")


def sliced_run(monkeypatch, tmp_path, ns: dict[str, float], slowed: dict[str, dict[int, float]],
               fault_at: tuple[str, int] | None = None):
    """A run of the fake subject's settings (``ns``: setting -> ns/op, "on" and "off") in slices, as
    comparison.interleaved runs them, a fake yardstick beside them; saved and read back. ``fault_at``:
    (configuration, fork) whose worker is a FaultyFake."""
    from jvmbridge.comparison import interleaved
    from jvmbridge.conductor.conduct import Configuration, WorkerSpec, slices_by_fork
    from jvmbridge.engines.base import Sliced

    monkeypatch.setitem(ENGINES, "subject", FakeEngine("subject", 100.0))
    work = workloads()[0]

    def measurement(on: bool):
        return lambda workload, outcomes, failed: Measurement(
            engine="fake subject", implementation="fake subject 1.0", setting="on" if on else "off", accelerated=on,
            as_requested=True, verified_state="fake", **workload.row_fields(),
            summary=summarize(slices_by_fork(outcomes), workload.sampling.first_stage),
            failed_fork=failed.error if failed else None)

    settings = [("subject", Sliced(name=f"fake subject, {state}", subject="fake subject", accelerated=state == "on",
                                   module="", request={}, workloads=[(work, "")], measurement=measurement(state == "on"),
                                   warmup_min_seconds=0, warmup_max_seconds=0)) for state in ns]
    job = interleaved.interleaved_job(settings, Matrix())
    # Configuration -> (its worker's key, as interleaved.conducting names them, its ns/op).
    speeds = {**{part.label: (str(i), ns[state]) for i, (part, state) in enumerate(zip(job.parts, ns))},
              interleaved.YARDSTICK_NAME: (interleaved.YARDSTICK_NAME, 400.0)}
    started = {label: itertools.count() for label in speeds}  # a worker's nth start is its nth fork's

    def start(label: str) -> SlicedFake:
        fork = next(started[label])
        return (FaultyFake if (label, fork) == fault_at else SlicedFake)(fork, speeds[label][1], slowed.get(label, {}))

    def spec(label: str) -> WorkerSpec:
        return WorkerSpec(lambda: start(label), 0.0, 0.0)

    def conducting(job) -> interleaved.Conducting:
        groups = [[part] for part in job.parts]
        return interleaved.Conducting(
            workers={key: spec(label) for label, (key, _) in speeds.items()},
            configurations=[Configuration(label, key, 0, counted=label != interleaved.YARDSTICK_NAME)
                            for label, (key, _) in speeds.items()],
            asked=interleaved.asked(job.settings, groups), groups=groups)

    monkeypatch.setattr(interleaved, "conducting", conducting)
    comparison = run([job], output=tmp_path / "run.jsonl")
    loaded = read([tmp_path / "run.jsonl"])
    return comparison, loaded, saved_comparison(loaded, next(iter(loaded.runs)))


def test_a_fork_inside_a_host_episode_is_set_aside_replaced_said_in_the_header_and_kept_in_the_saved_run(
        monkeypatch, tmp_path):
    from jvmbridge.comparison.interleaved import YARDSTICK_NAME

    # Fork 2 is inside an episode: every row slowed by its own amount, the yardstick too. Kept, it
    # would spread the speedup's first stage past Stein's reach and drive the forks to the limit.
    episode = {"fake subject, on": {2: 1.37}, "fake subject, off": {2: 1.60}, YARDSTICK_NAME: {2: 1.30}}
    comparison, loaded, reread = sliced_run(monkeypatch, tmp_path, {"on": 100.0, "off": 400.0}, episode)
    assert [f"{r.value:.2f}" for r in comparison.ratios] == ["4.00"] and comparison.ratios[0].turns == FORKS
    assert comparison.metadata["forks_stopped"].startswith(
        f"{FORKS + 1} ({FORKS} to {FORK_LIMIT}): 1 set aside, the host slowed 30% during it; the first {FORKS} put every "
        "ratio within ±2%")
    assert (f"Forks    {FORKS + 1} ({FORKS} to {FORK_LIMIT}): 1 set aside, the host slowed 30% during it"
            in render("compare", "table", comparison))
    saved = loaded.runs[next(iter(loaded.runs))]["end"]["episodes"]
    assert saved["set_aside"] == [2] and saved["seen_by"] == [YARDSTICK_NAME]
    assert len(saved["fork_readings"][YARDSTICK_NAME]) == FORKS + 1  # the fork set aside among them
    assert all(row["forks"] == FORKS + 1 for row in loaded.rows)  # each row keeps every fork
    assert reread.ratios == comparison.ratios  # report reads the saved run's ratios as compare said them


def test_a_fault_of_jvmbridges_own_in_a_fork_keeps_the_forks_before_it_saved_and_says_so_first(monkeypatch, tmp_path):
    """Nothing measured is lost when a run fails halfway, a bug of ours included."""
    from jvmbridge.comparison.headline import headline

    comparison, loaded, reread = sliced_run(monkeypatch, tmp_path, {"on": 100.0, "off": 400.0}, {},
                                            fault_at=("fake subject, off", 3))
    fault = "a fault of jvmbridge's own stopped the forks after 3: KeyError: 'sizes' (please report it)"
    assert not comparison.failures and all(row["forks"] == 3 for row in loaded.rows)
    assert comparison.metadata["forks_stopped"] == f"3 ({FORKS} to {FORK_LIMIT}): {fault}"
    assert headline(comparison.ratios, comparison.frame, comparison.metadata)[0] == fault[0].upper() + fault[1:]
    assert reread.metadata["fault"] == fault and "KeyError: 'sizes'" in reread.metadata["fault_traceback"]
    assert not [note for result in comparison.results for note in result.notes if note.kind is NoteKind.FORK_FAILED]


def test_a_ratio_whose_row_settled_at_two_levels_is_said_as_its_levels_and_drives_no_forks(monkeypatch, tmp_path):
    # The off row ran 5% slower in forks 1 and 3 (the JIT's slower way), the on row as elsewhere:
    # taken as one, the speedup's first stage would ask for the limit's forks.
    levels = {"fake subject, off": {1: 1.05, 3: 1.05}}
    comparison, loaded, reread = sliced_run(monkeypatch, tmp_path, {"on": 100.0, "off": 400.0}, levels)
    assert comparison.metadata["forks_stopped"] == f"{FORKS} ({FORKS} to {FORK_LIMIT}): the first {FORKS}: every ratio at levels"
    (ratio,) = comparison.ratios
    fork_level = [1 if fork in (1, 3) else 0 for fork in range(FORKS)]
    assert ratio.levels is not None and [level.forks for level in ratio.levels.levels] == [FORKS - 2, 2]
    assert list(ratio.levels.fork_level) == fork_level
    assert re.fullmatch(r"(3\.9\d|4|4\.0\d)x, or (4\.1\d|4\.2|4\.2\d)x when the JIT compiles fake subject, off, message, 16 B its slower way: "
                        rf"2 forks of {FORKS}", ratio.said_levels()), ratio.said_levels()
    assert f"fake acceleration makes it faster by {ratio.said_levels()}" in render("compare", "table", comparison)
    assert json.loads(render("compare", "json", comparison))["ratios"][0]["levels"]["fork_level"] == fork_level
    assert reread.ratios == comparison.ratios


def test_where_the_forks_reach_their_limit_the_answer_says_why_first_with_the_interval_reached(monkeypatch, tmp_path):
    from jvmbridge.comparison.headline import headline

    # The on row's forks spread 0-10% (no levels: 2.5% apart), no yardstick sees it: Stein's rule asks
    # for more forks than the limit allows, though not out of its reach.
    spread = {"fake subject, on": {fork: 1 + 0.025 * (fork * 3 % 5) for fork in range(FORK_LIMIT)}}
    comparison, _, reread = sliced_run(monkeypatch, tmp_path, {"on": 100.0, "off": 400.0}, spread)
    (ratio,) = comparison.ratios
    assert ratio.turns == FORK_LIMIT and not ratio.levels and ratio.high / ratio.value - 1 > 0.02
    reached = f"±{max(ratio.high / ratio.value - 1, 1 - ratio.low / ratio.value):.1%}"
    first = headline(comparison.ratios, comparison.frame, comparison.metadata)[0]
    assert re.fullmatch(rf"Stopped at the fork limit: 1 ratio still wider than ±2% \({re.escape(reached)} at most\): "
                        rf"the first {FORKS}'s spread asked \d\d forks", first), first
    assert render("compare", "table", comparison).startswith(first)
    assert headline(reread.ratios, reread.frame, reread.metadata)[0] == first


def test_where_one_fork_made_most_of_a_wide_first_stage_the_answer_names_it_and_the_row_that_moved_in_it(
        monkeypatch, tmp_path):
    from jvmbridge.comparison.headline import headline

    # Fork 2 of the on row alone ran 12% slower: one fork is no level, and the ratio's first stage
    # asks for more forks than the limit has.
    comparison, _, _ = sliced_run(monkeypatch, tmp_path, {"on": 100.0, "off": 400.0}, {"fake subject, on": {2: 1.12}})
    first = headline(comparison.ratios, comparison.frame, comparison.metadata)[0]
    assert re.fullmatch(r"Stopped at the fork limit: 1 ratio still wider than ±2% \(±\d\.\d% at most\): "
                        rf"the first {FORKS}'s "
                        r"spread asked \d\d forks; fork 3 made that spread \d+\.\d times as wide, where fake subject, on ran 1[12]\.\d% "
                        r"slower than in the other first forks", first), first


def test_a_row_that_skipped_some_of_the_runs_forks_is_paired_with_another_by_the_forks_both_ran():
    """After the first stage a row may sit out forks (docs/decisions/0014-forks-run-the-ratios-still-short.md):
    its rounds keep the run's fork numbers, so a ratio never pairs two forks that did not run together."""
    from types import SimpleNamespace

    from jvmbridge.comparison import interleaved
    from jvmbridge.comparison.ratios import paired_slices_by_fork

    def row(setting: str, ns_by_fork: dict[int, float]):
        forks = [[{"ns": ns * 1000, "iterations": 1000}] * 4 for ns in ns_by_fork.values()]
        measured = Measurement(engine="fake subject", implementation="fake subject 1.0", setting=setting,
                               accelerated=setting == "on", as_requested=True, verified_state="fake",
                               **workloads()[0].row_fields(), summary=summarize(forks))
        s = interleaved._numbered(measured, list(ns_by_fork), "label").summary
        return SimpleNamespace(round_ns_per_op=s.per_round_ns, round_iterations=s.round_iterations,
                               round_counters=s.round_counters, round_fork=s.round_fork)

    off = row("off", {0: 400.0, 1: 400.0, 2: 440.0, 3: 400.0})  # fork 2 ran slow; the on row sat it out
    on = row("on", {0: 100.0, 1: 100.0, 3: 100.0})
    assert [(fork, round(ratio, 6)) for fork, ratio in paired_slices_by_fork(off, on)] == [(0, 4.0), (1, 4.0), (3, 4.0)]


def test_a_row_that_skipped_forks_names_the_runs_fork_it_failed_in():
    """"fork N failed" counts the run's forks, which a row that sat some out counts apart from its own."""
    from jvmbridge.comparison import interleaved

    forks = [[{"ns": 100_000, "iterations": 1000}] * 4] * 3
    measured = Measurement(engine="fake subject", implementation="fake subject 1.0", setting="on", accelerated=True,
                           as_requested=True, verified_state="fake", **workloads()[0].row_fields(),
                           summary=summarize(forks), failed_fork="the fake worker crashed")
    result = interleaved._numbered(measured, [0, 1, 3], "label", failed_in=5).result("")
    assert [note.text for note in result.notes if note.kind is NoteKind.FORK_FAILED] == [
        "fork 6 failed, the 3 finished forks are the measurement: the fake worker crashed"]
