"""Two configurations' forks in turns (forks.parent.run_forks with two arms) and the ratio from their
pairs (comparison.ratios): real child processes of a Python worker whose speed its environment
sets (no engine), simulated forks on a host that slows for a while, and the native engines'
AES-NI on and off in a real compare.

Split by tier: here what needs a process; the rest is in tests/unit/test_turns.py."""
from __future__ import annotations

import json
import math
import statistics

import pytest
from helpers import run_cli
from scipy import stats


def test_native_aesni_on_and_off_run_in_turns_and_their_speedup_is_from_the_pairs():
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--engine", "openssl-cli", "--round-time", "0.05", "--rounds", "2",
                   "--forks", "3", "--max-forks", "3", "--quiet", "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    rows = document["results"]
    assert document["metadata"]["workloads_per_fork"] == 1  # each child measures one setting's one workload
    speedups = [ratio for ratio in document["ratios"] if ratio["kind"] == "speedup"]
    assert len(rows) == 4 and len(speedups) == 2
    for (on, off), ratio in zip((rows[:2], rows[2:]), speedups):
        assert (on["setting"], off["setting"]) == ("AES-NI on", "AES-NI off")
        assert on["in_turns"] == off["in_turns"] and on["in_turns"].endswith("AES-NI on and off in turns")
        assert on["forks"] == off["forks"] == 3  # as many forks each: run pair by pair
        # A fork whose every round the host disturbed has no summary, nor a turn to pair by; a row
        # whose every round it disturbed has the least disturbed rounds' figure, and no turns.
        for row in (on, off):
            summarized = len(row["fork_ns_per_op"]) if "" in row["round_set_aside"] else 0
            assert len(row["fork_turns"]) == summarized and set(row["fork_turns"]) <= {0, 1, 2}
        theirs = dict(zip(on["fork_turns"], on["fork_ns_per_op"]))
        logs = [math.log(slow / theirs[turn]) for turn, slow in zip(off["fork_turns"], off["fork_ns_per_op"]) if turn in theirs]
        assert ratio["paired_turns"] == (len(logs) if len(logs) >= 2 else 0)
        if ratio["paired_turns"]:  # the geometric mean of the turns' ratios, Student's t over their logs
            spread = math.exp(stats.t.ppf(0.975, len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs)))
            assert ratio["times"] == pytest.approx(math.exp(statistics.fmean(logs)))
            assert (ratio["low"], ratio["high"]) == pytest.approx((ratio["times"] / spread, ratio["times"] * spread))
        else:
            assert ratio["times"] == pytest.approx(off["ns_per_op"] / on["ns_per_op"])


FIRST = 8  # turns in the first stage: the spread of fewer moved up to 7x from run to run here


def _first_speedups(document: dict) -> list[float]:
    """The logs of the C loop's AES-NI speedup in each turn of a run's first stage."""
    on, off = document["results"]
    return [math.log(a / b) for a, b in zip(off["fork_ns_per_op"][:FIRST], on["fork_ns_per_op"][:FIRST])]


def test_a_total_time_stops_the_turns_of_a_real_engine_and_its_rows_say_so():
    # The turns stop on their ratio: Stein's rule asks (t(0.975, 7) sd / log(1 + target))^2 turns
    # from the first stage's spread, and none while that is more than 4 x the limit. That spread
    # moves from run to run (1.4-10.3% within minutes here), so the target is set from the runs
    # before (their spreads' geometric mean) to ask about 50 turns, more than 3 s leave room for;
    # where this run's spread moved so far that the rule asked none or was out of reach, the next
    # try sets it from every run so far.
    command = ("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--round-time", "0.05",
               "--rounds", "2", "--forks", str(FIRST), "--quiet", "--format", "json")
    done = run_cli(*command, "--max-forks", str(FIRST))
    assert done.returncode == 0, done.stderr
    t, spreads = stats.t.ppf(0.975, FIRST - 1), [statistics.stdev(_first_speedups(json.loads(done.stdout)))]
    for _ in range(5):
        target = t * statistics.geometric_mean(spreads) / math.sqrt(50)
        done = run_cli(*command, "--max-forks", "100", "--target-error", f"{100 * math.expm1(target):.3f}",
                       "--total-time", "3")
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        spreads.append(statistics.stdev(_first_speedups(document)))
        on, off = document["results"]
        if on["forks"] < (t * spreads[-1] / target) ** 2 <= 400:
            break
    else:
        pytest.fail(f"the rule never asked more turns than the first stage within reach: spreads {spreads}")
    assert document["metadata"]["total_time_seconds"] == 3
    assert FIRST <= on["forks"] == off["forks"] < 100  # still in turns, pair by pair
    for row in (on, off):
        assert [note["kind"] for note in row["notes"]].count("total-time") == 1
