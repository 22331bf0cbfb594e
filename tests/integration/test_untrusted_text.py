"""Text from hosts and processes reaches the terminal escaped: a host name, a command line, a flag
listing or a fleet document carrying terminal escape sequences is printed as what it says.
JSON keeps it exact (and escapes it itself).

Split by tier: here what needs a process; the rest is in tests/unit/test_untrusted_text.py."""
from __future__ import annotations

import csv
import io

from helpers import EVIL, FORMULAS, SHOWN, run_cli


def test_run_and_host_names_reach_csv_as_text(tmp_path):
    # The least run that saves its names: one setting's worker after the other, one shape (the conductor's
    # default way would run both shapes beside two yardsticks, cycle after cycle of slices: several times as long).
    once = ["--engine", "pyca", "--round-time", "0.01", "--rounds", "1", "--forks", "1", "--max-forks", "1", "--quiet",
            "--no-interleave", "--shape", "message"]
    runs = [tmp_path / "one.jsonl", tmp_path / "two.jsonl"]
    for run, name, host in zip(runs, FORMULAS[:2], [FORMULAS[3], EVIL]):
        done = run_cli("compare", *once, "--name", name, "--host-name", host, "--output", str(run))
        assert done.returncode == 0, done.stderr
    by_run = next(csv.reader(io.StringIO(run_cli("report", *map(str, runs), "--format", "csv").stdout)))
    by_host = next(csv.reader(io.StringIO(run_cli("report", *map(str, runs), "--columns", "host",
                                                  "--format", "csv").stdout)))
    assert by_run[1:3] == [f"'{FORMULAS[0]} ns/op", f"'{FORMULAS[1]} ns/op"], by_run
    assert by_host[1:3] == [f"'{FORMULAS[3]} ns/op", f"{SHOWN} ns/op"], by_host
