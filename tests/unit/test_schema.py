"""Saved results across versions: every shape of run file a release wrote (tests/data/run-*.jsonl,
each from a real `compare` run of that version) still loads and reports with the same figures, and
a record missing any field loads or says in one line which field.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_schema.py."""
from __future__ import annotations

import copy
import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from helpers import DATA, OLD, run_cli_here, saved_rows
from hypothesis import given, settings
from hypothesis import strategies as st

from jvmbridge.results import Measurement, NoteKind
from jvmbridge.saved.schema import SCHEMA_VERSION, RecordError, result_of, row_record, upgrade_row
from jvmbridge.saved.store import read
from jvmbridge.stats.summary import summarize


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


def test_old_notes_get_their_kinds_and_lose_the_hints_now_printed_once():
    row = {**saved_rows()[0], "notes": "INVALID: wrong; noisy: rounds vary by 9.0% (rsd); more --max-forks, a "
                                       "longer --round-time or a quieter machine helps; JVM said: hello"}
    upgraded = upgrade_row(row, 1)
    assert [n["kind"] for n in upgraded["notes"]] == [NoteKind.INVALID.value, NoteKind.NOISY.value,
                                                      NoteKind.ENGINE.value]
    assert upgraded["details"]["java_home"] == "/usr/lib/jvm/java-17-openjdk-amd64"


def test_a_row_saved_before_the_fork_became_the_unit_keeps_its_figure_and_says_how_it_was_made():
    from jvmbridge.saved.schema import POOLED_STATISTIC

    (old,) = [row for row in read([OLD]).rows][:1]
    assert old["statistic"] == POOLED_STATISTIC and old["jmh_score"] == saved_rows()[0]["ns_per_op_mean"]
    assert old["fork_ns_per_op"] == [] and "ns_per_op_mean" not in old


# One file per shape of run file a release wrote, each from a real `compare` of that version's code
# (`git archive <commit>`, JVM and openssl speed rows): 0.1.0's first (204f011: flat rows without
# cipher, threads, forks or intervals), 0.1.0 as released (1917bcb: before bytes_checked_after_loop),
# 0.1.0 late (the file above), 0.2.0 (1e56ca2: schema 2) and 0.3.0 (schema 3).
SHAPES = ["run-0.1.0-first.jsonl", "run-0.1.0-early.jsonl", "run-0.1.0.jsonl", "run-0.2.0.jsonl", "run-0.3.0.jsonl"]
EXPORTS = ("markdown", "csv", "json", "jmh", "html")


def report_everywhere(tmp_path: Path, *files: Path) -> subprocess.CompletedProcess:
    """`report FILES` as a table, with every other format exported beside it (in this process: ten
    reports here; tests/integration/test_schema.py's run the CLI as a user does)."""
    exports = [arg for f in EXPORTS for arg in (f"--export-{f}", str(tmp_path / f"report.{f}"))]
    return run_cli_here("report", *map(str, files), *exports, "--quiet")


def measurements(path: Path) -> list[dict]:
    return [record["row"] for record in map(json.loads, path.read_text().splitlines()) if record["type"] == "measurement"]


def test_a_statistic_reworded_between_builds_is_not_taken_for_another(tmp_path):
    """run-0.3.0.jsonl words its statistic as an earlier build did; the same run saved with today's
    words must not make `report` say the two computed ns/op differently."""
    from jvmbridge.results import STATISTIC

    earlier = DATA / "run-0.3.0.jsonl"
    records = [json.loads(line) for line in earlier.read_text().splitlines()]
    assert {r["row"]["statistic"] for r in records if r["type"] == "measurement"} != {STATISTIC}
    for record in records:
        record["run_id"] = "reworded"
        if record["type"] == "measurement":
            record["row"]["statistic"] = STATISTIC
    today = tmp_path / "today.jsonl"
    today.write_text("".join(json.dumps(record) + "\n" for record in records))
    done = run_cli_here("report", "--format", "json", str(earlier), str(today))
    assert done.returncode == 0, done.stderr
    assert not [note for note in json.loads(done.stdout)["notes"] if note.startswith("runs computed ns/op")]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_released_shape_reports_in_every_format(shape, tmp_path):
    saved = DATA / shape
    done = report_everywhere(tmp_path, saved)  # one run: as compare showed it
    assert done.returncode == 0 and done.stderr == "", done.stderr
    rows = json.loads((tmp_path / "report.json").read_text())["results"]
    assert sorted(row["ns_per_op"] for row in rows) == sorted(row["ns_per_op"] for row in measurements(saved))
    assert len(json.loads((tmp_path / "report.jmh").read_text())) == len(rows)
    assert all((tmp_path / f"report.{f}").stat().st_size > 500 for f in EXPORTS)
    beside = DATA / ("run-0.3.0.jsonl" if shape != "run-0.3.0.jsonl" else "run-0.1.0-first.jsonl")
    done = report_everywhere(tmp_path, saved, beside)  # two runs side by side
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert json.loads((tmp_path / "report.json").read_text())["columns"] == ["run 1", "run 2"]



@pytest.mark.parametrize("shape", SHAPES)
def test_every_released_shape_builds_results_that_flatten_back_field_for_field(shape):
    # Reports build each saved row's Result (nested) and flatten it again for JSON, CSV and pandas.
    for row in read([DATA / shape]).rows:
        saved = {name: value for name, value in row.items() if name not in ("run_id", "job", "position")}
        record = row_record(result_of(row))
        assert record == saved
        if shape == "run-0.3.0.jsonl":  # saved in today's layout: in its order too
            assert list(record) == list(saved)


def test_a_measured_result_comes_back_from_its_record_as_it_was():
    def rounds(ns: float, disturbed: int = -1) -> list[dict]:
        return [{"iterations": 1000, "ns": 1000 * ns * (1 + i / 100), "wait_ns": 50_000 * ns * (i == disturbed)}
                for i in range(6)]

    # Forks at two levels, one round of one fork set aside, forks in turns; and every round set aside.
    for forks, turns in (([rounds(100), rounds(100, 2), rounds(120), rounds(120)], [4, 5, 6, 7]),
                         ([[r] for r in rounds(100, 0)[:1] * 2], [0, 1])):
        measured = Measurement(engine="fake", implementation="fake 1.0", setting="on", accelerated=True,
                               as_requested=True, verified_state="fake", cipher="aes-128-cbc", direction="encrypt",
                               shape="message", message_bytes=16, summary=summarize(forks), in_turns="job",
                               fork_turns=turns, fork_seconds=[1.0] * len(forks)).result("")
        record = json.loads(json.dumps(row_record(measured)))
        assert result_of(upgrade_row(record, SCHEMA_VERSION)) == measured
    assert measured.fork_summaries[0].turn is None and record["fork_turns"] == []  # a summary of no one fork


def test_a_list_per_round_of_another_length_is_named():
    (record,) = measurements(DATA / "run-0.3.0.jsonl")[:1]
    rounds = len(record["round_ns_per_op"])
    with pytest.raises(RecordError, match=f'"row.round_set_aside" has 1 items, not one for each of the {rounds} of '
                                          '"row.round_ns_per_op"'):
        upgrade_row({**record, "round_set_aside": [""]}, SCHEMA_VERSION)

def key_paths(value, above: tuple = ()):
    """Every key of every object in a record, as a path from the record (list items by index)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(value, dict):
            yield (*above, key)
        yield from key_paths(item, (*above, key))


def without(record: dict, path: tuple) -> dict:
    record = copy.deepcopy(record)
    holder = record
    for key in path[:-1]:
        holder = holder[key]
    del holder[path[-1]]
    return record


@st.composite
def a_dropped_field(draw):
    """A shape's records with one key taken out of one record (at any depth), and the key's path."""
    records = [json.loads(line) for line in (DATA / draw(st.sampled_from(SHAPES))).read_text().splitlines()]
    number = draw(st.integers(0, len(records) - 1))
    path = draw(st.sampled_from(list(key_paths(records[number]))))
    return [*records[:number], without(records[number], path), *records[number + 1:]], path


@settings(max_examples=25, deadline=None)
@given(a_dropped_field())
def test_a_record_missing_any_field_loads_or_says_which_in_one_line(dropped):
    records, path = dropped
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "dropped.jsonl"
        saved.write_text("".join(json.dumps(record) + "\n" for record in records))
        done = run_cli_here("report", str(saved), "--format", "json")  # in this process: 25 examples
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, (path, done.stderr)
    if done.returncode != 0:
        assert done.returncode == 2, (path, done.stderr)
        (line,) = done.stderr.splitlines()
        # Named: the key, or where it sat in a list (a note without "kind" is a bad "row.notes").
        names = [str(key) for key, after in zip(path, (*path[1:], None)) if not isinstance(after, int)]
        assert str(saved) in line and names[-1] in line, (path, line)
