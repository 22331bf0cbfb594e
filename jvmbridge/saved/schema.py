"""How results are written down: the schema version, the record of one Result, reading records
written by older versions, and the flat row pandas gets.

Result files and `compare --format json` share this layout and this version. History:
1 (0.1.0): a row is flat: engine details (provider, jdk_version, java_home, command, ...) beside
   the figures; notes one string joined with "; "; rows saved before 0.1.0's --cipher lack
   "cipher" (the run's metadata names it) and "direction" (they encrypted).
2: the engine details under "details"; notes a list of {"kind", "text"} (kinds: results.NoteKind);
   "direction" in every row.
3 (0.3.0): the fork is the unit: ns_per_op is the mean over forks of each fork's lower quartile
   of undisturbed rounds, ns_per_op_error its interval over forks at `confidence` (95%), named in
   "statistic"; fork_ns_per_op, levels, disturbed_rounds; per round its fork, lost share and
   counters and why it was set aside; each fork's steadiness (change points); JMH's pooled mean and
   99.9% error as jmh_score and jmh_error (ns_per_op_mean is gone). Later in 0.3.0, a measurement
   record's "position" (beside its row): the row's place in compare's table, which finish order is not;
   then its "job" (the configuration without the workload's tag) and the row's fork_seconds (each
   fork's share of its child's wall time) and rounds_basis, by which later runs choose their rounds
   per fork (comparison.dimensioning); then in_turns (the job whose configurations ran their forks
   in turns) and fork_turns (each summarized fork's turn), by which ratios pair forks. Rows without
   them read as [] and "". Then the run's total_time_seconds, where compare had --total-time.
   Then the end record's "load" and each row's other_cpus (jvmbridge.machine); rows without it read as None.
"""
from __future__ import annotations

from dataclasses import fields

import pandas as pd

from jvmbridge.results import Note, NoteKind, Result

SCHEMA_VERSION = 3
READABLE = (1, 2, 3)
# What a row saved before 0.3.0 showed (its figure the median of every round, pooled).
POOLED_STATISTIC = ("the median of every round of every fork, pooled (saved before jvmbridge 0.3.0); interval: of "
                    "the mean of those rounds, as JMH's")
_FIELDS = [f.name for f in fields(Result)]


def row_record(result: Result) -> dict:
    """A Result as JSON-ready data."""
    record = {name: getattr(result, name) for name in _FIELDS}
    record["notes"] = [note.as_dict() for note in result.notes]
    return record


def result_of(record: dict) -> Result:
    """A row record (today's layout, as store.read gives it) as the Result it was saved from."""
    fields_ = {name: record[name] for name in _FIELDS if name in record}
    fields_["notes"] = [Note(NoteKind(note["kind"]), note["text"]) for note in record.get("notes") or []]
    return Result(**fields_)


def upgrade_row(row: dict, version: int) -> dict:
    """A row record of ``version`` in today's layout."""
    if version == 1:
        row = dict(row)
        details = {key: row.pop(key) for key in list(row) if key not in _FIELDS and key != "ns_per_op_mean"}
        notes = row.get("notes") or ""
        row.update(details=details, direction=row.get("direction", "encrypt"),
                   # The hints 0.1.0 appended ("more --rounds ... helps") are now printed once per output.
                   notes=[Note(_kind_of_v1_note(text), text).as_dict() for text in notes.split("; ")
                          if text and not text.startswith("more --")])
    if version < 3:
        row = dict(row)
        row.update(jmh_score=row.pop("ns_per_op_mean", row.get("ns_per_op")), jmh_error=row.get("ns_per_op_error"),
                   statistic=POOLED_STATISTIC, fork_ns_per_op=[], levels=[], disturbed_rounds=0, round_fork=[],
                   round_iterations=[], round_set_aside=[], fork_steadiness=[],
                   round_lost_share=[], round_counters=[])
    return row


def _kind_of_v1_note(text: str) -> NoteKind:
    """0.1.0 wrote notes as text only; their openings tell the kinds apart."""
    openings = {"INVALID": NoteKind.INVALID, "NOT AS REQUESTED": NoteKind.NOT_AS_REQUESTED,
                "noisy": NoteKind.NOISY, "interval ±": NoteKind.IMPRECISE, "only ": NoteKind.FEW_SAMPLES,
                "steady state not reached": NoteKind.NOT_STEADY, "dominated by Python": NoteKind.PYTHON_OVERHEAD}
    return next((kind for opening, kind in openings.items() if text.startswith(opening)), NoteKind.ENGINE)


def frame_row(row: dict) -> dict:
    """A row record flattened for a DataFrame: the engine details become columns of their own."""
    flat = {key: value for key, value in row.items() if key != "details"}
    flat.update({key: value for key, value in (row.get("details") or {}).items() if key not in flat})
    return flat


def frame_of(rows: list[dict]) -> pd.DataFrame:
    """Row records (current layout) as a DataFrame, one flat row each."""
    return pd.DataFrame([frame_row(row) for row in rows])
