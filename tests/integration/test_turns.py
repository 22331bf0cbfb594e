"""The turns schedule (--no-interleave: conductor.conduct.Pace.turns): the native engines' AES-NI on
and off, each worker alone in its turn, their speedup from the paired slices of each fork, in a
real compare; the schedule itself is tested in tests/unit/test_conductor.py."""
from __future__ import annotations

import json
import math
import statistics

import pytest
from helpers import run_cli
from scipy import stats

from jvmbridge.sampling.policy import FORKS_IN_TIME
from jvmbridge.stats.summary import DISTURBED_SHARE


def test_native_aesni_on_and_off_run_in_turns_and_their_speedup_is_from_the_pairs():
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--engine", "openssl-cli", "--round-time", "0.05", "--rounds", "2",
                   "--forks", "3", "--max-forks", "3", "--quiet", "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    rows = document["results"]
    assert document["metadata"]["workloads_per_fork"] == 1  # each worker measures one setting's one workload
    speedups = [ratio for ratio in document["ratios"] if ratio["kind"] == "speedup"]
    assert len(rows) == 4 and len(speedups) == 2
    for (on, off), ratio in zip((rows[:2], rows[2:]), speedups):
        assert (on["setting"], off["setting"]) == ("AES-NI on", "AES-NI off")
        assert on["in_turns"] == off["in_turns"] and on["in_turns"].endswith("each setting in turns")
        assert on["forks"] == off["forks"] == 3  # every fork runs each setting once
        # From the slices of each fork both ran (conductor.pairing), at least two of them.
        assert ratio["interleaved"] and 2 <= ratio["paired_turns"] <= 3
        assert ratio["low"] <= ratio["times"] <= ratio["high"]
    c_on, speed_on = rows[0], rows[2]
    # --rounds slices a fork; a disturbed slice is timed again, up to as many again (conduct._turn).
    # Read from each slice's lost share (conduct._turn's test): the summary may set a disturbed slice
    # aside as warm-up instead, where its fork had not yet settled.
    disturbed = any(lost > DISTURBED_SHARE for lost in c_on["round_lost_share"])
    assert 2 * 3 <= c_on["rounds"] <= 2 * 2 * 3 and (c_on["rounds"] == 2 * 3 or disturbed)
    assert speed_on["rounds"] == 3  # `openssl speed` on its own: a whole run a fork


FIRST = 8  # turns in the first stage: the spread of fewer moved up to 7x from run to run here


def _first_speedups(document: dict) -> list[float]:
    """The logs of the C loop's AES-NI speedup in each turn of a run's first stage."""
    on, off = document["results"]
    return [math.log(a / b) for a, b in zip(off["fork_ns_per_op"][:FIRST], on["fork_ns_per_op"][:FIRST])]


@pytest.mark.serial  # its turns' spreads set its target: beside another test most turns are disturbed and dropped
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
        speedups = _first_speedups(document)
        if len(speedups) < 2:  # the limit left one paired turn (a busy host): no spread to set the next target from
            continue
        spreads.append(statistics.stdev(speedups))
        on, off = document["results"]
        if on["forks"] < (t * spreads[-1] / target) ** 2 <= 400:
            break
    else:
        pytest.fail(f"the rule never asked more turns than the first stage within reach: spreads {spreads}")
    assert document["metadata"]["total_time_seconds"] == 3
    # Still in turns, pair by pair; a time limit may cut even the first stage, to FORKS_IN_TIME.
    assert FORKS_IN_TIME <= on["forks"] == off["forks"] < 100
    for row in (on, off):
        assert [note["kind"] for note in row["notes"]].count("total-time") == 1
