"""Saved results across versions: every shape of run file a release wrote (tests/data/run-*.jsonl,
each from a real `compare` run of that version) still loads and reports with the same figures, and
a record missing any field loads or says in one line which field.

Split by tier: here what needs a process; the rest is in tests/unit/test_schema.py."""
from __future__ import annotations

import json

import pytest
from helpers import OLD, run_cli, saved_rows


def test_the_old_file_reports_its_figures(tmp_path):
    # One run: shown as compare showed it, its rows and their figures as saved, how they were made said.
    done = run_cli("report", "--format", "json", str(OLD))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["results"]
    assert len(rows) == 12
    assert [row["ns_per_op"] for row in rows] == pytest.approx([row["ns_per_op"] for row in saved_rows()])
    table = run_cli("report", str(OLD)).stdout
    assert "saved before jvmbridge 0.3.0" in table
    # Beside another run, a column of its own.
    run_id = json.loads(OLD.read_text().splitlines()[0])["run_id"]
    (tmp_path / "other.jsonl").write_text(OLD.read_text().replace(run_id, "another-run"))
    done = run_cli("report", "--format", "json", str(OLD), str(tmp_path / "other.jsonl"))
    shown = {row["configuration"]: row["run 1 ns/op"] for row in json.loads(done.stdout)["comparison"]}
    assert len(shown) == 12
    assert shown["JVM SunJCE, JDK 17.0.15 | intrinsics on | aes-256-cbc 16 B"] == pytest.approx(saved_rows()[0]["ns_per_op"])


def test_report_says_once_when_runs_computed_their_figures_differently(tmp_path):
    new = tmp_path / "new.jsonl"
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--round-time", "0.1", "--rounds", "3", "--forks", "3",
                   "--max-forks", "3", "--key-bits", "256", "--sizes", "16", "-q", "-o", str(new))
    assert done.returncode == 0, done.stderr
    notes = json.loads(run_cli("report", "--format", "json", str(OLD), str(new)).stdout)["notes"]
    (said,) = [note for note in notes if note.startswith("runs computed ns/op differently")]
    assert "run 1: the median of every round of every fork, pooled" in said and "run 2: the mean of each fork's" in said
