"""Result files: JSON lines flushed as each measurement finishes, so a run that dies halfway
(a JVM crash, Ctrl-C, this process killed) leaves every finished measurement readable. Records:
run, measurement, failure, end; from `verify`, verification and verification_end.
"""
from __future__ import annotations

import datetime
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from jvmbridge import jsontext
from jvmbridge.saved.published import speed_text_runs
from jvmbridge.saved.schema import (
    READABLE,
    SCHEMA_VERSION,
    RecordError,
    check_load,
    check_metadata,
    non_finite,
    upgrade_metadata,
    upgrade_row,
)
from jvmbridge.saved.speed_text import SpeedTextError
from jvmbridge.trust.bounded import NotAFile, TooLarge, read_regular_file
from jvmbridge.trust.paths import private_folder
from jvmbridge.trust.writer import create_private_file, open_for_writing


def data_dir() -> Path:
    """$XDG_DATA_HOME/jvmbridge (~/.local/share when unset)."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "jvmbridge"


def default_path(started: datetime.datetime, host: str) -> Path:
    """<data_dir>/runs/<UTC start>-<host>.jsonl, the host's name made safe."""
    return data_dir() / "runs" / f"{started:%Y%m%dT%H%M%SZ}-{file_name_part(host)}.jsonl"


_NOT_IN_FILE_NAMES = re.compile(r"[^A-Za-z0-9._-]+")


def file_name_part(text: str) -> str:
    """A host's name (another party's choice) as part of a file name: no separators or leading dot,
    so "../../x" names no other folder."""
    return _NOT_IN_FILE_NAMES.sub("_", text).lstrip(".") or "_"


class ResultWriter:
    """Appends records to one run's file, flushing each. A write error does not stop the run: the
    first is kept in ``error`` and nothing more is written. ``output``: the user's file, appended
    to; else a new file (never a planted link) in a runs folder only root can change, as root."""

    def __init__(self, output: Path | None, run_id: str, started: datetime.datetime, host: str):
        self.path, self.run_id = output or default_path(started, host), run_id
        self.error: str | None = None
        self._file: TextIO | None = None
        try:
            if output:
                descriptor = open_for_writing(output, append=True, make_folders=True)
            else:
                descriptor, self.path = _new_file(self.path)
            self._file = os.fdopen(descriptor, "a", encoding="utf-8")
        except OSError as e:  # NotTrusted too
            self._failed(e)

    def write(self, record_type: str, **fields) -> None:
        if self._file is None:
            return
        record = {"schema_version": SCHEMA_VERSION, "type": record_type, "run_id": self.run_id, **fields}
        try:
            self._file.write(jsontext.dumps(record) + "\n")
            self._file.flush()
        except OSError as e:
            self._failed(e)

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError as e:
                self._failed(e)
            self._file = None

    def _failed(self, e: OSError) -> None:
        self.error = self.error or f"{e.filename or self.path}: {e.strerror or e}"
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass  # the first error is the one to tell
            self._file = None


def _new_file(path: Path) -> tuple[int, Path]:
    """A new file at ``path``, or with "-2", "-3"... where a run of the same second has it."""
    folder = private_folder(path.parent, "the runs folder")
    name, number = path.name, 1
    while True:
        try:
            return create_private_file(folder / name), folder / name
        except FileExistsError:
            number += 1
            name = f"{path.stem}-{number}{path.suffix}"


@dataclass
class Loaded:
    runs: dict[str, dict] = field(default_factory=dict)  # run_id -> metadata (plus "file", "end")
    rows: list[dict] = field(default_factory=list)  # measurement rows, each with its run_id
    failures: list[dict] = field(default_factory=list)
    verifications: list[dict] = field(default_factory=list)  # `verify` records, one per JDK
    problems: list[str] = field(default_factory=list)  # one line each: what could not be read


class ResultFileError(ValueError):
    """A file with nothing readable in it, or a record in it that no jvmbridge wrote."""


# Large sweeps save a few MB; the cap keeps a device, FIFO or huge file from eating a reader's memory.
MAX_RUN_FILE_BYTES = 64 * 2**20


def read(paths: list[str | Path]) -> Loaded:
    """Every readable record of ``paths``; non-JSON lines (a run killed mid-line) go to ``problems``.
    A record no jvmbridge wrote refuses its file (ResultFileError naming line and field). A file not
    starting with a JSON record is read as `openssl speed` output."""
    loaded = Loaded()
    for path in map(Path, paths):
        text = read_text_limited(path)
        if text.strip() and not text.lstrip().startswith("{"):
            _read_speed_text(loaded, path, text)
        else:
            _read_run_file(loaded, path, text)
    return loaded


def read_text_limited(path: Path, limit: int = MAX_RUN_FILE_BYTES) -> str:
    """The regular file at ``path``, at most ``limit`` bytes; ResultFileError otherwise."""
    try:
        data = read_regular_file(path, limit)
    except OSError as e:
        raise ResultFileError(f"{path}: {e.strerror}") from None
    except NotAFile as e:
        raise ResultFileError(f"{path}: {e}: runs are read from files only") from None
    except TooLarge as e:
        raise ResultFileError(f"{path}: {e}, more than any run file jvmbridge writes; not read") from None
    return data.decode("utf-8", errors="replace")


def _read_run_file(loaded: Loaded, path: Path, text: str) -> None:
    before = len(loaded.rows)
    runs: set[str] = set()  # the runs this file describes
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                _read_record(loaded, path, number, line, last=number == len(lines), runs=runs)
            except RecordError as e:
                raise ResultFileError(f"{path}:{number}: {e}") from None
    _upgrade_runs(loaded, runs)
    if len(loaded.rows) == before:
        _refuse_rowless_file(loaded, path)


def _refuse_rowless_file(loaded: Loaded, path: Path) -> None:
    """ResultFileError for a file that gave no rows, where it holds `verify`'s results or no run."""
    if any(v["file"] == str(path) for v in loaded.verifications):
        raise ResultFileError(f"{path}: `verify` results, which report does not show: "
                              "`jvmbridge verify --format json` prints them")
    if not any(run.get("file") == str(path) for run in loaded.runs.values()):
        raise ResultFileError(f"{path}: no jvmbridge records" + (f" ({loaded.problems[-1]})" if loaded.problems else ""))


def _upgrade_runs(loaded: Loaded, runs: set[str]) -> None:
    """Upgrade ``runs``' metadata once their rows are read (early 0.1.0 files need them)."""
    for run_id in runs:
        rows = [row for row in loaded.rows if row["run_id"] == run_id]
        run = loaded.runs[run_id]
        loaded.runs[run_id] = {**upgrade_metadata(run.pop("metadata"), rows), **run}


def _read_speed_text(loaded: Loaded, path: Path, text: str) -> None:
    try:
        runs, skipped = speed_text_runs(path, text)
    except SpeedTextError as e:
        if e.line is None:
            raise ResultFileError(f"{path}: no jvmbridge records, and no AES figures of `openssl speed` "
                                  "output either") from None
        raise ResultFileError(str(e)) from None
    loaded.problems += skipped
    for number, run in enumerate(runs, 1):
        run_id = f"speed:{path}#{number}"
        loaded.runs[run_id] = {**run.metadata, "file": str(path)}
        loaded.rows += [{**row, "run_id": run_id} for row in run.rows]


def _read_record(loaded: Loaded, path: Path, number: int, line: str, last: bool, runs: set[str]) -> None:
    where = f"{path}:{number}"
    record, skipped = _record_of(line, last)
    if record is None:
        loaded.problems.append(f"{where}: {skipped}, skipped")
        return
    if (field_ := non_finite(record)) is not None:
        raise RecordError(f'"{field_}" is NaN or infinite, which no jvmbridge writes (an undefined figure is null)')
    kind, run_id = record.get("type"), record.get("run_id")
    if not isinstance(run_id, str):
        raise RecordError(f'"run_id" is {run_id!r}, not a run\'s name')
    read = _READ_BY_TYPE.get(kind) if isinstance(kind, str) else None
    if read is None:
        loaded.problems.append(f"{where}: " + (f"unknown record type {kind!r}" if "type" in record else 'no "type"')
                               + ", skipped")
        return
    read(loaded, path, record, runs)


def _record_of(line: str, last: bool) -> tuple[dict | None, str]:
    """The record on ``line`` if of a schema this jvmbridge reads; else None and why it is skipped."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None, "truncated last line" if last else "not JSON"
    except RecursionError:
        return None, "JSON nested deeper than any jvmbridge record"
    if not isinstance(record, dict) or "schema_version" not in record:
        return None, "not a jvmbridge record (no \"schema_version\")"
    version = record["schema_version"]
    if version not in READABLE or isinstance(version, bool):
        newer = isinstance(version, int) and version > SCHEMA_VERSION
        return None, (f"schema version {version!r}; "
                      + ("written by a newer jvmbridge: upgrade jvmbridge to read it" if newer
                         else f"this jvmbridge reads versions {', '.join(map(str, READABLE))}"))
    return record, ""


def _read_run(loaded: Loaded, path: Path, record: dict, runs: set[str]) -> None:
    if "metadata" not in record:
        raise RecordError('a "run" record without "metadata"')
    check_metadata(record["metadata"])
    loaded.runs[record["run_id"]] = {"metadata": record["metadata"], "file": str(path)}
    runs.add(record["run_id"])


def _read_measurement(loaded: Loaded, path: Path, record: dict, runs: set[str]) -> None:
    run_id = record["run_id"]
    if run_id not in runs:
        raise RecordError(f"a measurement of run {run_id!r}, whose \"run\" record is not before it in the file"
                          + (f" ({loaded.problems[-1]})" if loaded.problems else ""))
    if "row" not in record:
        raise RecordError('a "measurement" record without "row"')
    workload = loaded.runs[run_id]["metadata"]["workload"]
    loaded.rows.append({**upgrade_row(record["row"], record["schema_version"], workload),
                        "run_id": run_id, **{key: record[key] for key in ("position", "job") if key in record}})


def _read_failure(loaded: Loaded, path: Path, record: dict, runs: set[str]) -> None:
    loaded.failures.append({"run_id": record["run_id"], "configuration": record.get("configuration"),
                            "error": record.get("error")})


# What a run found, in its end record beside which rows finished.
END_FINDINGS = ("load", "host_speed", "forks_stopped", "episodes", "forks_limit", "fault", "fault_traceback",
                "work_seconds")


def _read_end(loaded: Loaded, path: Path, record: dict, runs: set[str]) -> None:
    check_load(record.get("load"))
    kept = ("completed", "failed", "interrupted", *END_FINDINGS)
    loaded.runs.setdefault(record["run_id"], {"file": str(path)})["end"] = {k: record.get(k) for k in kept}


def _read_verification(loaded: Loaded, path: Path, record: dict, runs: set[str]) -> None:
    loaded.verifications.append({**record, "file": str(path)})


_READ_BY_TYPE = {"run": _read_run, "measurement": _read_measurement, "failure": _read_failure, "end": _read_end,
                 "verification": _read_verification, "verification_end": _read_verification}
