"""compare's default way for the JVM and the C loop: every setting a live worker, slices
interleaved cycle by cycle by the conductor, ratios from paired slices, a yardstick for the host's
speed, the answer first. Real JVMs, the real C loop on the real OpenSSL."""
from __future__ import annotations

import ctypes
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from helpers import run_cli, run_json

from jvmbridge.comparison import runner
from jvmbridge.comparison.interleaved import InterleavedJob
from jvmbridge.comparison.request import CompareRequest, resolve_matrix
from jvmbridge.comparison.runner import plan
from jvmbridge.sampling.policy import FORKS
from jvmbridge.stats.summary import DISTURBED_SHARE


class Printed(NamedTuple):
    table: str  # compare's stdout, its table
    document: dict  # the same run's JSON document (--export-json)


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> Printed:
    """compare's default engines (the JVM, the C loop, `openssl speed`) and shapes, 2 forks: one run
    that the tests of the answer, the slices and `openssl speed` all read, in its table and its JSON."""
    document = tmp_path_factory.mktemp("interleaved") / "document.json"
    done = run_cli("compare", "--sizes", "16", "--forks", "2", "--max-forks", "2", "--quiet",
                   "--export-json", str(document))
    assert done.returncode == 0, done.stderr
    return Printed(done.stdout, json.loads(document.read_text()))


@pytest.fixture(scope="module")
def interleaved(printed) -> dict:
    return printed.document


@pytest.mark.serial  # the speedup is asserted
def test_every_row_ran_in_the_same_cycles_and_every_ratio_pairs_their_slices(interleaved):
    rows = interleaved["results"]
    # The JVM and the C loop, on and off, messages and stream, `openssl speed` the stream: compare's default.
    assert len(rows) == 8 and all(row["interleaved"] and row["forks"] == 2 for row in rows)
    assert len({row["in_turns"] for row in rows}) == 1
    assert interleaved["metadata"]["workload"]["budget"] == ("10 cycles a fork of a 50 ms slice of each row, in a fresh "
                                                             "random order")
    # The same number of slices in every fork of every row: one a cycle.
    cycles = {tuple(row["round_fork"].count(fork) for fork in (0, 1)) for row in rows}
    assert len(cycles) == 1 and min(next(iter(cycles))) >= 10
    # Every loop's bytes checked against OpenSSL's (`openssl speed` computes none that can be read).
    assert all(row["ciphertext_ok"] is (None if row["engine"].startswith("OpenSSL speed") else True) for row in rows)
    ratios = interleaved["ratios"]
    assert {r["kind"] for r in ratios} == {"speedup", "versus"} and all(r["interleaved"] for r in ratios)
    intrinsics = next(r for r in ratios if r["label"].startswith("intrinsics speedup"))
    assert intrinsics["low"] <= intrinsics["times"] <= intrinsics["high"] and intrinsics["times"] > 1.5


@pytest.mark.serial  # the host's speed is asserted
def test_the_answer_comes_first_and_the_host_speed_is_measured(interleaved):
    headline = interleaved["headline"]
    assert 1 <= len(headline) <= 6
    assert headline[0].startswith("JVM SunJCE, JDK ") and ": AES intrinsics active, " in headline[0]
    assert interleaved["metadata"]["forks_stopped"] == "2 (at most 2): the limit"
    speed = interleaved["metadata"]["host_speed"]
    assert speed["yardstick"].startswith("yardstick") and 0 < speed["speed"] <= 1
    assert speed["reference_ns_per_op"] <= speed["ns_per_op"]
    assert len(speed["fork_ns_per_op"]) == 2 and speed["ns_per_op"] == pytest.approx(statistics.fmean(speed["fork_ns_per_op"]))


def test_the_table_leads_with_the_answer(printed):
    first = printed.table.splitlines()[0]
    assert first.startswith("JVM SunJCE, JDK ") and "AES intrinsics active" in first, printed.table[:300]
    assert "\nForks    2 (at most 2): the limit\n" in printed.table


def test_iterations_are_the_runs_work_shared_exactly_among_its_forks_slices_and_the_run_says_what_it_costs():
    done, data = run_json("compare", "--engine", "c-loop", "--shape", "message", "--iterations", "3e6", "--forks", "2",
                          "--max-forks", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    for row in data["results"]:
        for fork in (0, 1):
            assert sum(n for n, f in zip(row["round_iterations"], row["round_fork"]) if f == fork) == 1_500_000
    meta = data["metadata"]
    assert meta["workload"]["budget"].startswith("3,000,000 messages of each row, 1,500,000 a fork, in slices")
    assert meta["work_seconds"] == pytest.approx(3e6 * sum(row["ns_per_op"] for row in data["results"]) / 1e9)
    assert meta["load"]["seconds"] > meta["work_seconds"]


def test_openssl_speed_runs_in_slices_of_its_own_processes_paired_with_the_jvm(interleaved):
    """`openssl speed` cannot run exactly n operations: each slice is a process of its own, stopped
    when its time is up, counting what it did; its rows then pair with the JVM's slice by slice.
    The default engines, shapes unnamed: the JVM's stream against `openssl speed`, its messages
    against the C loop's, which leaves its stream to `openssl speed`."""
    data = interleaved
    assert {row["shape"] for row in data["results"] if row["engine"].startswith("OpenSSL C loop")} == {"message"}
    versus = {r["label"]: r for r in data["ratios"] if r["kind"] == "versus"}
    assert sorted(versus) == [f"JVM vs {native}, acceleration {state}, {shape} shape" for native, shape in
                              (("OpenSSL C loop", "message"), ("openssl speed", "stream")) for state in ("off", "on")]
    assert all(r["interleaved"] and r["paired_turns"] == 2 for r in versus.values())
    speed = [row for row in data["results"] if row["engine"].startswith("OpenSSL speed")]
    assert [row["setting"] for row in speed] == ["AES-NI on", "AES-NI off"]
    for row in speed:
        assert row["interleaved"] and row["forks"] == 2 and row["rounds"] >= 20
        assert len(set(row["round_iterations"])) > 1  # counted by openssl speed itself, not asked
        for per_op, messages in zip(row["round_ns_per_op"], row["round_iterations"]):
            assert 0.04 < per_op * messages / 1e9 < 0.2, row  # a 50 ms slice, timed to the signal
        assert "timed from start line to SIGALRM" in " ".join(n["text"] for n in row["notes"])
        assert "-seconds 3 -bytes 16 -evp aes-256-cbc" in row["details"]["command"]
    assert data["metadata"]["jit_shared_by"] == 0  # a worker of several parts shares a JIT only in a JVM


def test_where_openssl_speed_runs_in_turns_the_c_loop_keeps_the_stream_in_the_jvms_slices():
    """--iterations fixes the work, which `openssl speed` cannot count: it runs whole runs in turns, so the C
    loop runs the stream too, in the slices the JVM's stream pairs with (the plan; nothing is run)."""
    request = CompareRequest(iterations=1_000_000)
    jobs = plan(list(request.workloads), resolve_matrix(request))
    (together,) = [job for job in jobs if isinstance(job, InterleavedJob) and not job.turns]
    assert {part.label for part in together.parts if part.label.startswith("C loop")} == {
        f"C loop, AES-NI {state}, {shape}" for state in ("on", "off") for shape in ("message", "stream")}
    assert [part.label for job in jobs if job is not together for part in job.parts] == [
        "openssl speed, AES-NI on, stream", "openssl speed, AES-NI off, stream"]
    # The header's Method line says what each way ran, not --iterations' count for `openssl speed`.
    assert runner._budget(jobs) == (f"1,000,000 messages of each row, {-(-1_000_000 // FORKS):,} a fork, in slices in a "
                                    "fresh random order; OpenSSL speed (C loop): a run of 1 s per fork (it cannot run "
                                    f"a given count), {FORKS} fork(s)")


def _aes_ni_speedup(document: dict) -> dict:
    return next(r for r in document["ratios"] if r["label"].startswith("AES-NI speedup"))  # one shape: unnamed


C_LOOP_RUN = ("compare", "--engine", "c-loop", "--shape", "message", "--forks", "3", "--max-forks", "3", "--quiet")


@pytest.fixture(scope="module")
def calm_c_loop() -> dict:
    """A C-loop compare with nothing of the tests' beside it: the run the hogged ones are held to."""
    done, calm = run_json(*C_LOOP_RUN)
    assert done.returncode == 0, done.stderr
    return calm


def _c_loop_beside(hog: str, cpus: set[int]) -> dict:
    """The C-loop run's document, made while ``hog`` (Python source, looping forever) runs on ``cpus``."""
    process = subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {sorted(cpus)})\n{hog}"])
    try:
        done, hogged = run_json(*C_LOOP_RUN)
    finally:
        process.kill()
        process.wait()
    assert done.returncode == 0, done.stderr
    return hogged


def _agree(calm: dict, hogged: dict) -> None:
    """The two runs' AES-NI speedups agree within their intervals (each one's half-width on the log
    scale, in quadrature): a point of one run inside the other's 95% interval fails one time in six
    even without a hog."""
    calm_ratio, hogged_ratio = _aes_ni_speedup(calm), _aes_ni_speedup(hogged)
    apart = abs(math.log(hogged_ratio["times"] / calm_ratio["times"]))
    assert apart <= math.hypot(_log_half_width(calm_ratio), _log_half_width(hogged_ratio)), (calm_ratio, hogged_ratio)


@pytest.mark.serial  # two runs' speedups compared, one beside a CPU hog of its own
def test_a_cpu_hog_on_the_measuring_vcpu_leaves_the_paired_speedup_where_a_calm_run_has_it(calm_c_loop):
    """Another process spinning on the very vCPU the slices run on, the whole run long: each
    slice it preempts waits (the paired ratio leaves the wait out) and both sides of a cycle see
    the same host; the speedup stays inside the interval of a calm run made just before."""
    hogged = _c_loop_beside("while True: pass", {max(os.sched_getaffinity(0))})
    _agree(calm_c_loop, hogged)
    # The hog was felt: slices waited for their vCPU (the wait each slice's figure leaves out). Not
    # "disturbed rounds": where the hog slows a fork's first slices, PELT may call them warm-up.
    waited = _waited_seconds(hogged), _waited_seconds(calm_c_loop)
    assert waited[0] > max(0.2, 5 * waited[1]), waited


@pytest.mark.serial  # two runs' speedups compared, one beside a memory hog of its own
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two vCPUs: one to measure on, one for the hog")
def test_a_memory_hog_on_the_other_vcpu_for_part_of_the_run_leaves_the_speedup_where_a_calm_run_has_it(calm_c_loop):
    """A neighbour copying 64 MiB buffers over and over on the other vCPU, 3 s of every 6 (a host's
    bad moment: caches and memory bandwidth shared, no wait on the measuring vCPU): the speedup stays
    inside the calm run's interval, and both yardsticks were read in every fork, for stats.episodes."""
    copying = ("import time\na, b = bytearray(64 << 20), bytearray(64 << 20)\n"
               "while True:\n    end = time.monotonic() + 3\n    while time.monotonic() < end: b[:] = a\n"
               "    time.sleep(3)")
    hogged = _c_loop_beside(copying, os.sched_getaffinity(0) - {max(os.sched_getaffinity(0))})
    _agree(calm_c_loop, hogged)
    # The hog ran beside it (the run's own count of other processes' CPU), and each yardstick has a
    # reading per fork, the episodes rule's only input.
    assert hogged["metadata"]["load"]["other_cpus"] > calm_c_loop["metadata"]["load"]["other_cpus"] + 0.25
    readings = hogged["metadata"]["episodes"]["fork_readings"]
    assert {name.split(", ")[-1] for name in readings} == {"AES-NI as the CPU offers", "AES-NI masked (table-based AES)"}
    assert all(len(fork) == 3 for fork in readings.values()), readings


def _log_half_width(ratio: dict) -> float:
    return max(math.log(ratio["high"] / ratio["times"]), math.log(ratio["times"] / ratio["low"]))


def _waited_seconds(document: dict) -> float:
    """How long the run's slices waited for their vCPU while another process ran there, in all."""
    return sum(counters.get("wait_ns", 0) for row in document["results"] for counters in row["round_counters"]) / 1e9


def _workers(compare: subprocess.Popen, module: str) -> set[int]:
    """The pids of this compare's worker processes running ``module`` (another run's are not ours)."""
    found = subprocess.run(["pgrep", "-P", str(compare.pid), "-f", module], capture_output=True, text=True)
    return {int(pid) for pid in found.stdout.split()}


def _thread(pid: int, name: str) -> int | None:
    """The id of a thread of process ``pid`` whose name starts with ``name`` ("VM Thread", "C2
    CompilerThre": Linux keeps 15 characters), once it has one."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "comm").read_text().strip().startswith(name):
                return int(task.name)
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return None


def _start(path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "jvmbridge", "compare", *args, "--output", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _rows(path: Path) -> tuple[list[dict], list[dict], dict]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return ([r for r in records if r["type"] == "measurement"], [r for r in records if r["type"] == "failure"],
            records[-1])


@pytest.mark.serial  # times slices against each other
def test_a_jvm_message_loops_first_slices_run_as_fast_as_its_last(tmp_path):
    """Its warm-up lasts until its process no longer faults in fresh memory. Before, each fresh page of
    the heap faulted on first touch, and the intrinsics-off loop's first slices ran 15-120% slow."""
    document = tmp_path / "document.json"
    done = run_cli("compare", "--engine", "jvm", "--shape", "message", "--forks", "2", "--max-forks", "2", "--quiet",
                   "--export-json", str(document))
    assert done.returncode == 0, done.stderr
    judged = 0
    for row in json.loads(document.read_text())["results"]:
        for fork in (0, 1):
            # A slice other work on the host held up is the host's, not the loop's (as compare sets it aside).
            slices = [(ns, lost <= DISTURBED_SHARE) for ns, lost, at
                      in zip(row["round_ns_per_op"], row["round_lost_share"], row["round_fork"]) if at == fork]
            first, rest = ([ns for ns, calm in part if calm] for part in (slices[:3], slices[3:]))
            if len(first) >= 2 and len(rest) >= 3:
                judged += 1
                assert min(first) < 1.08 * statistics.median(rest), (row["setting"], fork, slices)
    assert judged >= 2, "the host disturbed too many of the forks' slices to judge them"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two vCPUs: one to measure on, one for the rest")
def test_only_the_measuring_thread_is_pinned_the_jvm_compiles_and_collects_on_every_vcpu_jpype_off_it(tmp_path):
    path, ours = tmp_path / "pinned.jsonl", os.sched_getaffinity(0)
    compare = _start(path, "--engine", "jvm", "--shape", "message", "--forks", "1", "--max-forks", "1", "--quiet")
    deadline = time.time() + 120
    # A worker pins its main thread, which runs the timed loop, once its JVM is up.
    while not (pinned := [pid for pid in _workers(compare, "jvmbridge.jvm.worker")
                          if _affinity(pid) == {max(ours)} and _thread(pid, "C2 CompilerThre")]):
        assert compare.poll() is None, f"compare ended (status {compare.returncode}): {compare.communicate()[1][-600:]}"
        assert time.time() < deadline, "no JVM worker pinned its measuring thread"
        time.sleep(0.05)
    assert _affinity(_thread(pinned[0], "C2 CompilerThre")) == ours
    # JPype's reference queue is the harness's thread, not the JVM's work: kept off the measuring vCPU.
    assert _affinity(_thread(pinned[0], "Python Referenc")) == ours - {max(ours)}
    assert compare.wait(timeout=120) == 0
    measured, _, _ = _rows(path)
    # The JVM saw every vCPU, so its ergonomics chose as this host's JVMs do (G1, not Serial); each of
    # the two JVMs live at once (intrinsics on and off) took half the heap one would (MaxRAMPercentage 25).
    for details in (r["row"]["details"] for r in measured):
        assert details["jvm_processors"] == str(len(ours)) and details["jvm_collectors"].startswith("G1"), details
        assert details["jvm_options"].startswith("-XX:MaxRAMPercentage=12.5 "), details


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two vCPUs: one to measure on, one for the rest")
@pytest.mark.serial  # the next fork warms up aside only after a fork of undisturbed slices
def test_the_next_forks_jvm_warms_up_off_the_measuring_vcpu_then_is_timed_on_it(tmp_path):
    path, ours = tmp_path / "aside.jsonl", os.sched_getaffinity(0)
    measuring, others = max(ours), ours - {max(ours)}
    compare = _start(path, "--engine", "jvm", "--shape", "message", "--forks", "4", "--max-forks", "4", "--quiet")
    deadline = time.time() + 120

    def waiting(what: str) -> None:
        assert compare.poll() is None, f"compare ended (status {compare.returncode}): {compare.communicate()[1][-600:]}"
        assert time.time() < deadline, what
        time.sleep(0.02)

    # The third fork's JVMs warm up while the second fork's slices run, where the first fork's ran almost
    # undisturbed (conduct.QUIET_SHARE; else the fourth's, beside the third: one fork in six here had
    # 8% of its 60 slices disturbed): every thread of one, its measuring thread and its compilers,
    # off the measuring vCPU.
    while not (aside := [pid for pid in _workers(compare, "jvmbridge.jvm.worker")
                         if _affinity(pid) == others == _affinity(_thread(pid, "C2 CompilerThre"))]):
        waiting("no JVM worker warmed up off the measuring vCPU (were more than 5% of the first fork's slices disturbed?)")
    # Then, as every worker: its measuring thread on the measuring vCPU, its JVM's threads on every vCPU.
    while _affinity(aside[0]) != {measuring}:
        waiting("the JVM worker warmed up aside never came back to the measuring vCPU")
    assert _affinity(_thread(aside[0], "C2 CompilerThre")) == ours
    assert compare.wait(timeout=120) == 0
    measured, _, _ = _rows(path)
    assert len(measured) == 2 and all(r["row"]["forks"] == 4 for r in measured)


def _affinity(thread: int | None) -> set[int]:
    try:
        return os.sched_getaffinity(thread) if thread else set()
    except ProcessLookupError:  # it ended meanwhile
        return set()


def test_a_jvm_that_crashes_fails_its_configuration_with_the_crash_and_the_other_is_measured(tmp_path):
    path = tmp_path / "crashed.jsonl"
    # One fork: a crash, and the other configuration's fork measured, is all the test reads.
    compare = _start(path, "--engine", "jvm", "--shape", "message", "--forks", "1", "--max-forks", "1", "--quiet")
    deadline = time.time() + 120
    # A JVM up in one of its workers, then a SIGSEGV for its VM thread, as a broken intrinsic would raise.
    # Not for the process: a thread running compiled Java code may take it, and HotSpot then reads
    # it as an implicit null check and throws NullPointerException (a CI run saw that).
    while not (jvms := [(pid, thread) for pid in _workers(compare, "jvmbridge.jvm.worker")
                        if (thread := _thread(pid, "VM Thread"))]):
        assert time.time() < deadline and compare.poll() is None, "no JVM worker started"
        time.sleep(0.1)
    assert ctypes.CDLL(None, use_errno=True).tgkill(*jvms[0], signal.SIGSEGV) == 0
    _, stderr = compare.communicate(timeout=300)
    report = re.search(r"report: (\S+hs_err_pid\d+\.log)", stderr)
    # The crash report the JVM wrote in jvmbridge's cache: not left behind by a test (unless another pytest
    # session, ending meanwhile, took it: tests/conftest.py removes those made while a session ran).
    if report:
        Path(report.group(1)).unlink(missing_ok=True)
    assert compare.returncode == 1
    assert re.search(r"intrinsics o(n|ff) failed: /\S+: the JVM crashed \(killed by SIGABRT\): SIGSEGV", stderr), stderr
    assert "jvmbridge verify --java" in stderr and report
    measured, failed, _ = _rows(path)
    assert len(measured) + len(failed) == 2 and measured and all(r["row"]["ciphertext_ok"] for r in measured)


def test_ctrl_c_keeps_every_rows_finished_forks(tmp_path):
    path = tmp_path / "interrupted.jsonl"
    # The message shape alone: a fork of its two rows ends sooner than one of four with the stream's (rows of
    # both shapes in one interleaved run: the printed fixture's tests).
    compare = _start(path, "--engine", "c-loop", "--shape", "message", "--forks", "12", "--max-forks", "12", "--quiet")
    deadline = time.time() + 120
    # The first fork's workers, which all start at once and end with it: the same in two polls running,
    # so that none was still starting (a poll between two starts once took one worker for the fork,
    # and Ctrl-C came while the fork was stopping the others).
    first, last = set(), set()
    while not first or not (now := _workers(compare, "jvmbridge.native.c_worker")) or now & first:
        seen = _workers(compare, "jvmbridge.native.c_worker")
        first, last = first or (seen if seen == last else set()), seen
        assert time.time() < deadline and compare.poll() is None, "no second fork started"
        time.sleep(0.05)
    compare.send_signal(signal.SIGINT)
    stdout, stderr = compare.communicate(timeout=60)
    assert compare.returncode == 130 and "Traceback" not in stderr
    measured, failed, end = _rows(path)
    assert len(measured) == 2 and not failed and end["interrupted"] is True
    for row in (r["row"] for r in measured):
        assert 1 <= row["forks"] < 12 and "interrupted (Ctrl-C)" in json.dumps(row["notes"])
        assert row["ciphertext_ok"] is True  # the C loop's messages, on and off, checked against OpenSSL's bytes
    assert "AES-NI makes it" in stdout  # the answer from the forks that finished
    assert not _workers(compare, "jvmbridge.native.c_worker")
