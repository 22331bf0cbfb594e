"""Saved results across versions: a file 0.1.0 wrote (tests/data/run-0.1.0.jsonl, from a real
`compare` run of that version) still loads and reports with the same figures."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from jvmbridge.results import NoteKind
from jvmbridge.saved.schema import SCHEMA_VERSION, upgrade_row
from jvmbridge.saved.store import read

OLD = Path(__file__).parent / "data" / "run-0.1.0.jsonl"


def saved_rows() -> list[dict]:
    return [json.loads(line)["row"] for line in OLD.read_text().splitlines() if '"measurement"' in line]


@pytest.mark.fast
def test_the_old_file_is_version_1_and_reads_in_todays_layout():
    assert {json.loads(line)["schema_version"] for line in OLD.read_text().splitlines()} == {1}
    assert SCHEMA_VERSION > 1
    loaded = read([OLD])
    assert not loaded.problems and len(loaded.rows) == len(saved_rows()) == 12
    for old, new in zip(saved_rows(), loaded.rows):
        assert new["ns_per_op"] == old["ns_per_op"] and new["round_ns_per_op"] == old["round_ns_per_op"]
        assert new["direction"] == "encrypt"
        assert {k: v for k, v in old.items() if k in new["details"]} == new["details"]
        assert all(note["text"] in old["notes"] for note in new["notes"]) and new["notes"]


@pytest.mark.fast
def test_old_notes_get_their_kinds_and_lose_the_hints_now_printed_once():
    upgraded = upgrade_row({"notes": "INVALID: wrong; noisy: rounds vary by 9.0% (rsd); more --max-forks, a "
                                     "longer --round-time or a quieter machine helps; JVM said: hello",
                            "java_home": "/jdk"}, 1)
    assert [n["kind"] for n in upgraded["notes"]] == [NoteKind.INVALID.value, NoteKind.NOISY.value,
                                                      NoteKind.ENGINE.value]
    assert upgraded["details"] == {"java_home": "/jdk"}


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


@pytest.mark.fast
def test_a_row_saved_before_the_fork_became_the_unit_keeps_its_figure_and_says_how_it_was_made():
    from jvmbridge.saved.schema import POOLED_STATISTIC

    (old,) = [row for row in read([OLD]).rows][:1]
    assert old["statistic"] == POOLED_STATISTIC and old["jmh_score"] == saved_rows()[0]["ns_per_op_mean"]
    assert old["fork_ns_per_op"] == [] and "ns_per_op_mean" not in old


def test_report_says_once_when_runs_computed_their_figures_differently(tmp_path):
    new = tmp_path / "new.jsonl"
    done = run_cli("compare", "--engine", "c-loop", "--round-time", "0.1", "--rounds", "3", "--forks", "3",
                   "--max-forks", "3", "--key-bits", "256", "--sizes", "16", "-q", "-o", str(new))
    assert done.returncode == 0, done.stderr
    notes = json.loads(run_cli("report", "--format", "json", str(OLD), str(new)).stdout)["notes"]
    (said,) = [note for note in notes if note.startswith("runs computed ns/op differently")]
    assert "run 1: the median of every round of every fork, pooled" in said and "run 2: the mean over forks" in said
