"""How results are written down: the schema version, one Result's flat record, upgrading older
versions' records, and the flat row pandas gets. Result files and `compare --format json` share
this layout; docs/schema.md lists what each version added.
"""
from __future__ import annotations

import copy
import math
import statistics
import typing
from dataclasses import fields

import pandas as pd

from jvmbridge.results import Estimate, ForkSummary, Note, NoteKind, Result, Round
from jvmbridge.stats.summary import Level

SCHEMA_VERSION = 3
READABLE = (1, 2, 3)
# What a pre-0.3.0 row's figure was.
POOLED_STATISTIC = ("the median of every round of every fork, pooled (saved before jvmbridge 0.3.0); interval: of "
                    "the mean of those rounds, as JMH's")
# A row's record in saved order; each field means the Result's field of that name (row_record).
_LAYOUT = {
    "engine": str, "implementation": str, "setting": str, "accelerated": bool, "as_requested": bool,
    "verified_state": str, "cipher": str, "direction": str, "shape": str, "message_bytes": int, "threads": int,
    "ns_per_op": float, "ns_per_op_min": float, "ns_per_op_max": float, "ns_per_op_error": float | None,
    "confidence": float, "statistic": str, "fork_ns_per_op": list[float], "levels": list[dict],
    "jmh_score": float, "jmh_error": float | None, "rsd": float | None,
    "rounds": int, "disturbed_rounds": int, "forks": int, "iterations": int,
    "round_ns_per_op": list[float], "round_iterations": list[int], "round_fork": list[int],
    "round_lost_share": list[float], "round_counters": list[dict], "round_set_aside": list[str],
    "fork_steadiness": list[str],
    "ops_per_s": float, "ops_per_s_per_thread": float, "mb_per_s": float, "openssl_kbytes_per_s": float,
    "warmup_iterations": int | None, "warmup_seconds": float | None,
    "ciphertext_ok": bool | None, "bytes_checked_after_loop": bool, "notes": list[dict], "details": dict,
    "fork_seconds": list[float], "rounds_basis": str, "in_turns": str, "fork_turns": list[int],
    "other_cpus": float | None, "interleaved": bool, "first_stage": int,
}
# Fields added later in schema 3, and their defaults.
_DEFAULTED: dict[str, object] = {"fork_seconds": [], "rounds_basis": "", "in_turns": "", "fork_turns": [],
                                 "other_cpus": None, "interleaved": False, "first_stage": 0}
_AS_THEY_ARE = [f.name for f in fields(Result) if f.name in _LAYOUT and f.name != "notes"]
# Per-round lists, empty in pre-0.3.0 rows.
_PER_ROUND = ("round_iterations", "round_fork", "round_lost_share", "round_counters", "round_set_aside")
# What schema 1 added as 0.1.0 grew, and what an older row means (tests/data/run-0.1.0-first.jsonl).
_ADDED_IN_0_1_0 = {
    "direction": lambda row, workload: "encrypt",  # --direction came later: they encrypted
    "threads": lambda row, workload: 1,  # --threads came later: one loop
    "ops_per_s_per_thread": lambda row, workload: row["ops_per_s"] / row["threads"],
    "forks": lambda row, workload: 1,  # forks came later: one process per setting
    "ns_per_op_error": lambda row, workload: None,  # no interval then
    "confidence": lambda row, workload: 0.999,  # JMH's, as 0.1.0's intervals were
    "bytes_checked_after_loop": lambda row, workload: False,  # checked from 0.2.0 on
    "cipher": lambda row, workload: workload.get("cipher"),
}
# The engine details each engine's rows are named by, by label.
_DETAILS_NAMING = {"JVM": ("provider", "jdk_version"), "AESNITester (whole run)": ("jdk_version",)}
_LOAD_FIGURES = ("cpus", "other_cpus", "steal_cpus")
# Every version wrote these; the rest is shown where present.
_METADATA_NEEDED = ("jvmbridge_version", "started_utc", "host", "kernel", "cpu", "workload")
_CPU_NEEDED = ("model", "features")


class RecordError(ValueError):
    """One record that cannot be read: the message names the field and why."""


def row_record(result: Result) -> dict:
    """A Result as its record: flat, JSON-ready, in _LAYOUT's order."""
    estimate, forks, rounds = result.estimate, result.fork_summaries, result.timed_rounds
    record = {name: getattr(result, name) for name in _AS_THEY_ARE}
    record.update(
        ns_per_op=estimate.ns_per_op, ns_per_op_min=estimate.fastest_round, ns_per_op_max=estimate.slowest_round,
        ns_per_op_error=estimate.error, confidence=estimate.confidence, statistic=estimate.statistic,
        levels=[level.as_dict() for level in estimate.levels], jmh_score=estimate.jmh_score,
        jmh_error=estimate.jmh_error, rsd=estimate.rsd,
        fork_ns_per_op=[fork.ns_per_op for fork in forks], fork_turns=_recorded([fork.turn for fork in forks]),
        round_ns_per_op=[round_.ns_per_op for round_ in rounds],
        **{name: _recorded([getattr(round_, name.removeprefix("round_")) for round_ in rounds]) for name in _PER_ROUND},
        notes=[note.as_dict() for note in result.notes])
    return {name: record[name] for name in _LAYOUT}


def result_of(record: dict) -> Result:
    """A record of today's layout (upgrade_row's) as the Result it was saved from."""
    per_round = [_or_none(record[name], len(record["round_ns_per_op"])) for name in _PER_ROUND]
    return Result(
        **{name: record[name] for name in _AS_THEY_ARE},
        estimate=Estimate(
            ns_per_op=record["ns_per_op"], error=record["ns_per_op_error"], confidence=record["confidence"],
            statistic=record["statistic"], fastest_round=record["ns_per_op_min"], slowest_round=record["ns_per_op_max"],
            levels=tuple(Level(ns_per_op=level["ns_per_op"], forks=level["forks"]) for level in record["levels"]),
            jmh_score=record["jmh_score"], jmh_error=record["jmh_error"], rsd=record["rsd"]),
        fork_summaries=tuple(ForkSummary(ns_per_op=ns, turn=turn) for ns, turn in zip(
            record["fork_ns_per_op"], _or_none(record["fork_turns"], len(record["fork_ns_per_op"])))),
        timed_rounds=tuple(Round(ns_per_op=ns, iterations=n, fork=fork, lost_share=lost, counters=counters,
                                 set_aside=why)
                           for ns, n, fork, lost, counters, why in zip(record["round_ns_per_op"], *per_round)),
        notes=[Note(kind=NoteKind(note["kind"]), text=note["text"]) for note in record["notes"]])


def _or_none(values: list, count: int) -> list:
    """A per-round (per-fork) list, or ``count`` Nones where the row lacks it ([])."""
    return values or [None] * count


def _recorded(values: list) -> list:
    """_or_none undone: the list as saved, [] where the row lacked it."""
    return [] if any(value is None for value in values) else values


def upgrade_row(row: dict, version: int, workload: dict | None = None) -> dict:
    """A row record of ``version`` in today's layout; RecordError names what is missing or wrong."""
    if not isinstance(row, dict):
        raise RecordError(f'"row" is {_shown(row)}, not an object')
    if version == 1:
        row = _flat_to_nested(row, workload or {})
    if version < 3:
        row = _pooled_to_forks(row)
    _check_row(row)
    return row


def _flat_to_nested(row: dict, workload: dict) -> dict:
    """Schema 1: engine details beside the figures, notes one string."""
    row = dict(row)
    details = {key: row.pop(key) for key in list(row) if key not in _LAYOUT and key != "ns_per_op_mean"}
    for name, default in _ADDED_IN_0_1_0.items():
        if name not in row and _needs(row, name):
            row[name] = default(row, workload)
    row.update(details=details, notes=_v1_notes(row.get("notes")))
    return row


def _v1_notes(notes) -> list[dict]:
    """Schema 1's notes, one text, as today's list of notes."""
    if not isinstance(notes, str):
        raise RecordError(f'"row.notes" is {_shown(notes)}: schema 1 wrote notes as one text')
    # 0.1.0's appended hints are now printed once per output.
    return [Note(kind=_kind_of_v1_note(text), text=text).as_dict() for text in notes.split("; ")
            if text and not text.startswith("more --")]


def _needs(row: dict, name: str) -> bool:
    """Whether a default for ``name`` can be derived (ops per thread needs the row's ops_per_s)."""
    return name != "ops_per_s_per_thread" or "ops_per_s" in row


def _pooled_to_forks(row: dict) -> dict:
    """Before schema 3 a row's figure pooled every round; JMH's mean is kept as jmh_score."""
    row = dict(row)
    rounds = row.get("round_ns_per_op")
    pooled_mean = statistics.fmean(rounds) if _numbers(rounds) and rounds else row.get("ns_per_op")
    row.update(jmh_score=row.pop("ns_per_op_mean", pooled_mean), jmh_error=row.get("ns_per_op_error"),
               statistic=POOLED_STATISTIC, fork_ns_per_op=[], levels=[], disturbed_rounds=0,
               round_fork=_forks_in_turn(rounds, row.get("forks")), round_iterations=[], round_set_aside=[],
               fork_steadiness=[], round_lost_share=[], round_counters=[])
    return row


def _forks_in_turn(rounds, forks) -> list[int]:
    """Each round's fork where forks ran in turn with equal rounds (pre-0.3.0); else []."""
    if not isinstance(rounds, list) or not isinstance(forks, int) or forks < 1 or len(rounds) % forks:
        return []
    return [i * forks // len(rounds) for i in range(len(rounds))]


def _check_row(row: dict) -> None:
    """Every field present or defaulted, of its type; per-round lists complete or empty."""
    for name, hint in _LAYOUT.items():
        if name not in row:
            if name in _DEFAULTED:  # written out, so rows of a frame agree on it beside newer ones
                row[name] = copy.copy(_DEFAULTED[name])
                continue
            raise RecordError(f'the row has no "{name}", which every row of its schema version has')
        if name != "notes" and not _fits(row[name], hint):
            raise RecordError(f'"row.{name}" is {_shown(row[name])}, not {_type_name(hint)}')
    _check_lengths(row)
    _check_levels(row)
    for name in _DETAILS_NAMING.get(row["engine"], ()):
        if not isinstance(row["details"].get(name), str):
            raise RecordError(f'"row.details.{name}" is {_shown(row["details"].get(name))}: '
                              "its engine's rows are named by it")
    _check_notes(row)


def _check_lengths(row: dict) -> None:
    """Each per-round (per-fork) list one item each or none."""
    for name, per in (*((name, "round_ns_per_op") for name in _PER_ROUND), ("fork_turns", "fork_ns_per_op")):
        if row[name] and len(row[name]) != len(row[per]):
            raise RecordError(f'"row.{name}" has {len(row[name])} items, not one for each of the '
                              f'{len(row[per])} of "row.{per}"')


def _check_levels(row: dict) -> None:
    for level in row["levels"]:
        if not (_fits(level.get("ns_per_op"), float) and _fits(level.get("forks"), int)):
            raise RecordError(f'"row.levels" holds {_shown(level)}, not a {{"ns_per_op", "forks"}}')


def _check_notes(row: dict) -> None:
    kinds = {kind.value for kind in NoteKind}
    for note in row["notes"] if isinstance(row["notes"], list) else [None]:
        if not (isinstance(note, dict) and note.get("kind") in kinds and isinstance(note.get("text"), str)):
            raise RecordError(f'"row.notes" holds {_shown(note)}, not a {{"kind", "text"}} of a known kind')


def _fits(value, hint) -> bool:
    """Whether a JSON value fits a field's type (an int is a float)."""
    origin, parts = typing.get_origin(hint), typing.get_args(hint)
    if origin is list:
        return isinstance(value, list) and all(_fits(item, parts[0]) for item in value)
    if parts:  # X | None
        return any(_fits(value, part) for part in parts)
    if hint is type(None):
        return value is None
    if hint is float:
        return _numbers([value])
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _numbers(values) -> bool:
    return isinstance(values, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _type_name(hint) -> str:
    return str(hint).replace("typing.", "").replace("<class '", "").replace("'>", "")


def _shown(value) -> str:
    """A value as an error line shows it: short, one line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_metadata(metadata) -> None:
    """RecordError unless a run's metadata holds what readers use (every version wrote it)."""
    if not isinstance(metadata, dict):
        raise RecordError(f'"metadata" is {_shown(metadata)}, not an object')
    for name in _METADATA_NEEDED:
        if name not in metadata:
            raise RecordError(f'the run\'s metadata has no "{name}", which every version wrote')
    for name in ("cpu", "workload"):
        if not isinstance(metadata[name], dict):
            raise RecordError(f'"metadata.{name}" is {_shown(metadata[name])}, not an object')
    for name in _CPU_NEEDED:
        if name not in metadata["cpu"]:
            raise RecordError(f'the run\'s metadata has no "cpu.{name}", which every version wrote')


def check_load(load) -> None:
    """RecordError unless the end record's "load" is null (not read) or all its figures."""
    if load is None:
        return
    if not isinstance(load, dict):
        raise RecordError(f'"load" is {_shown(load)}, not an object')
    for name in _LOAD_FIGURES:
        if not _numbers([load.get(name)]):
            raise RecordError(f'"load.{name}" is {_shown(load.get(name))}, not a number')


def upgrade_metadata(metadata: dict, rows: list[dict]) -> dict:
    """A run's metadata with what 0.1.0's first files lacked, taken from its ``rows``."""
    workload = metadata["workload"]
    return {**metadata, "workload": {
        **workload, "sizes": workload.get("sizes") or sorted({row["message_bytes"] for row in rows}),
        "ciphers": workload.get("ciphers") or list(dict.fromkeys(row["cipher"] for row in rows)),
        "budget": workload.get("budget") or _budget(workload)}}


def _budget(workload: dict) -> str:
    """What 0.1.0's first files say of the time a run took: --iterations split into --rounds."""
    if workload.get("iterations") and workload.get("rounds"):
        return f"{workload['iterations']:,} messages in {workload['rounds']} rounds, 1 fork"
    return "budget not recorded"


def non_finite(value, where: str = "") -> str | None:
    """The first place holding NaN or infinity ("row.round_ns_per_op[2]"), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = non_finite(item, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}".lstrip("."))
        if found is not None:
            return found
    return None


def _kind_of_v1_note(text: str) -> NoteKind:
    """0.1.0 wrote notes as text only; their openings tell the kinds apart."""
    openings = {"INVALID": NoteKind.INVALID, "NOT AS REQUESTED": NoteKind.NOT_AS_REQUESTED,
                "noisy": NoteKind.NOISY, "interval ±": NoteKind.IMPRECISE, "only ": NoteKind.FEW_SAMPLES,
                "steady state not reached": NoteKind.NOT_STEADY, "dominated by Python": NoteKind.PYTHON_OVERHEAD}
    return next((kind for opening, kind in openings.items() if text.startswith(opening)), NoteKind.ENGINE)


def frame_row(row: dict) -> dict:
    """A row record flattened for a DataFrame: engine details as columns."""
    flat = {key: value for key, value in row.items() if key != "details"}
    flat.update({key: value for key, value in (row.get("details") or {}).items() if key not in flat})
    return flat


def frame_of(rows: list[dict]) -> pd.DataFrame:
    """Row records (current layout) as a DataFrame, one flat row each."""
    return pd.DataFrame([frame_row(row) for row in rows])
