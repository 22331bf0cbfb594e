"""compare's default way for the JVM and the C loop: every setting a live worker, slices
interleaved cycle by cycle by the conductor, ratios from paired slices, a yardstick for the host's
speed, the answer first. Real JVMs, the real C loop on the real OpenSSL."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import run_cli, run_json

TWO_FORKS = ["--engine", "jvm", "--engine", "c-loop", "--forks", "2", "--max-forks", "2", "--quiet"]


@pytest.fixture(scope="module")
def interleaved():
    done, data = run_json("compare", *TWO_FORKS)
    assert done.returncode == 0, done.stderr
    return data


@pytest.mark.serial  # the speedup is asserted
def test_every_row_ran_in_the_same_cycles_and_every_ratio_pairs_their_slices(interleaved):
    rows = interleaved["results"]
    # The JVM and the C loop, on and off, messages and stream: compare's default.
    assert len(rows) == 8 and all(row["interleaved"] and row["forks"] == 2 for row in rows)
    assert len({row["in_turns"] for row in rows}) == 1
    # The same number of slices in every fork of every row: one a cycle.
    cycles = {tuple(row["round_fork"].count(fork) for fork in (0, 1)) for row in rows}
    assert len(cycles) == 1 and min(next(iter(cycles))) >= 10
    assert all(row["ciphertext_ok"] for row in rows)
    ratios = interleaved["ratios"]
    assert {r["kind"] for r in ratios} == {"speedup", "versus"} and all(r["interleaved"] for r in ratios)
    intrinsics = next(r for r in ratios if r["label"].startswith("intrinsics speedup"))
    assert intrinsics["low"] <= intrinsics["times"] <= intrinsics["high"] and intrinsics["times"] > 1.5


@pytest.mark.serial  # the host's speed is asserted
def test_the_answer_comes_first_and_the_host_speed_is_measured(interleaved):
    headline = interleaved["headline"]
    assert 1 <= len(headline) <= 6
    assert headline[0].startswith("JVM SunJCE, JDK ") and ": AES intrinsics active, " in headline[0]
    speed = interleaved["metadata"]["host_speed"]
    assert speed["yardstick"].startswith("yardstick") and 0 < speed["speed"] <= 1
    assert speed["reference_ns_per_op"] <= speed["ns_per_op"]


def test_the_table_leads_with_the_answer():
    done = run_cli("compare", *TWO_FORKS[:-1])
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("JVM SunJCE, JDK ") and "AES intrinsics active" in first, done.stdout[:300]


def test_iterations_are_exactly_that_many_messages_per_fork_across_its_slices():
    done, data = run_json("compare", "--engine", "c-loop", "--iterations", "3e6", "--forks", "2", "--max-forks", "2",
                          "--quiet")
    assert done.returncode == 0, done.stderr
    for row in data["results"]:
        for fork in (0, 1):
            assert sum(n for n, f in zip(row["round_iterations"], row["round_fork"]) if f == fork) == 3_000_000


def _aes_ni_speedup(document: dict) -> dict:
    return next(r for r in document["ratios"] if r["label"].startswith("AES-NI speedup"))  # one shape: unnamed


@pytest.mark.serial  # two runs' speedups compared, one beside CPU hogs of its own
def test_a_cpu_hog_on_the_measuring_vcpu_leaves_the_paired_speedup_where_a_calm_run_has_it():
    """Another process spinning on the very vCPU the slices run on, for part of the run: each
    slice it preempts waits (the paired ratio leaves the wait out) and both sides of a cycle see
    the same host; the speedup stays inside the interval of a calm run made just before."""
    run = ["compare", "--engine", "c-loop", "--shape", "message", "--forks", "3", "--max-forks", "3", "--quiet"]
    done, calm = run_json(*run)
    assert done.returncode == 0, done.stderr
    measuring = max(os.sched_getaffinity(0))
    hog = subprocess.Popen([sys.executable, "-c", f"import os, time\nos.sched_setaffinity(0, {{{measuring}}})\n"
                                                  "end = time.monotonic() + 8\nwhile time.monotonic() < end: pass"])
    try:
        done, hogged = run_json(*run)
    finally:
        hog.kill()
        hog.wait()
    assert done.returncode == 0, done.stderr
    calm_ratio, hogged_ratio = _aes_ni_speedup(calm), _aes_ni_speedup(hogged)
    assert calm_ratio["low"] <= hogged_ratio["times"] <= calm_ratio["high"], (calm_ratio, hogged_ratio)
    # The hog was felt: slices that waited for their vCPU, which the rows' figures set aside.
    assert any(row["disturbed_rounds"] for row in hogged["results"])
