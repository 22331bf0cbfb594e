"""Saved runs side by side: one tidy frame, then a comparison of each configuration across runs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from jvmbridge.comparison.hostspeed import plus_minus
from jvmbridge.comparison.ratios import Ratio, RatioKind, speedup
from jvmbridge.engines import ENGINES, jdk_of, name_of
from jvmbridge.host.cpu import features_text
from jvmbridge.results import missing, same_statistic
from jvmbridge.saved.schema import frame_of
from jvmbridge.saved.store import Loaded
from jvmbridge.wholenumber import whole_number

# Run metadata on every row, so a frame can be sliced without the files.
_RUN_COLUMNS = {"host": ("host",), "cpu_model": ("cpu", "model"), "cpu_features": ("cpu", "features"),
                "cores": ("cores",), "kernel": ("kernel",), "jvmbridge_version": ("jvmbridge_version",),
                "started_utc": ("started_utc",), "cipher": ("workload", "cipher"), "key_bits": ("workload", "key_bits"),
                "file": ("file",), "published": ("published",), "run_name": ("name",),
                "round_seconds": ("workload", "round_seconds"), "host_speed": ("end", "host_speed", "speed"),
                "host_speed_error": ("end", "host_speed", "relative_error")}


def tidy_frame(loaded: Loaded) -> pd.DataFrame:
    """One row per measurement of every run, with that run's metadata as columns."""
    frames = []
    for run_id in dict.fromkeys(row["run_id"] for row in loaded.rows):
        metadata = loaded.runs.get(run_id, {})
        rows = [row for row in loaded.rows if row["run_id"] == run_id]
        frame = frame_of(rows)
        for column, keys in _RUN_COLUMNS.items():
            if column not in frame:  # a row's own value (e.g. each cipher of an `openssl speed` text) wins
                frame[column] = _dig(metadata, keys)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _dig(metadata: dict, keys: tuple[str, ...]):
    value: object = metadata
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return " ".join(value) if isinstance(value, list) else value


def configuration(row, with_jdk: bool = True, with_size: bool = True, with_threads: bool = True,
                  with_setting: bool = True) -> str:
    """What was measured, independent of where and when."""
    engine = name_of(row, with_jdk)
    size = f" {row.message_bytes} B" if with_size else ""
    direction = getattr(row, "direction", None)
    decrypting = " decrypt" if direction == "decrypt" else ""  # rows saved before decrypt existed encrypted
    parallel = f" | {threads(row)} threads" if with_threads and threads(row) > 1 else ""
    setting = f" | {row.setting}" if with_setting else ""
    return f"{engine}{setting} | {row.cipher}{decrypting}{size}{parallel}"


def threads(row) -> int:
    """Loops at once; older rows ran one (NaN beside newer rows)."""
    value = getattr(row, "threads", None)
    return 1 if value is None or missing(value) else int(value)


def number_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with a "run" column: compare --name, else "run 1", "run 2"... by start."""
    runs = frame.drop_duplicates("run_id").sort_values("started_utc", kind="stable")
    given = runs.run_name if "run_name" in runs else pd.Series([None] * len(runs), index=runs.index)
    taken = given.value_counts()
    names = {run_id: f"run {n}" if not isinstance(name, str) else name if taken[name] == 1 else f"{name} (run {n})"
             for n, (run_id, name) in enumerate(zip(runs.run_id, given), 1)}
    order = {run_id: n for n, run_id in enumerate(runs.run_id)}
    return frame.assign(run=frame.run_id.map(names), run_order=frame.run_id.map(order))


def describe_runs(frame: pd.DataFrame) -> list[str]:
    """One line per run: number, host, start and file; a published text's run and what it says."""
    runs = frame.drop_duplicates("run").sort_values("run_order")
    return [f"{r.run}: {r.file}, {r.published}" if isinstance(r.published, str)
            else f"{r.run}: {r.host}, started {r.started_utc}, {r.file}{_host_speed(r)}" for r in runs.itertuples()]


def _host_speed(run) -> str:
    """"; the host at 0.93 of its best speed (±1%)": runs of different hours differ by that alone."""
    speed = getattr(run, "host_speed", None)
    if speed is None or missing(speed):
        return ""
    error = getattr(run, "host_speed_error", None)
    return f"; the host at {speed:.2f} of its best speed" + ("" if error is None or missing(error) else f" ({plus_minus(error)})")


@dataclass
class RunComparison:
    columns: list[str]  # column labels, in the order shown
    table: pd.DataFrame  # configuration, then per column: ns/op; per later column: vs baseline
    notes: list[str]
    # (configuration, column label) -> the tidy frame's row shown there
    cells: dict[tuple[str, str], Any] = field(default_factory=dict)
    baseline: str = ""  # the column the others are compared with


def compare_runs(frame: pd.DataFrame, columns: str = "run", baseline: str | None = None) -> RunComparison:
    """Rows by configuration, a column per ``columns``, each against ``baseline`` (a label, or a given
    file's run; pyperf's compare_to), the first by default. ValueError if it names no column."""
    # In run order: a configuration repeated in a column keeps the latest run's.
    frame = number_runs(frame).sort_values("started_utc", kind="stable", na_position="first")
    by_jdk, by_threads, by_setting, by_size = (columns == kind for kind in ("jdk", "threads", "setting", "size"))
    labels_of = [configuration(r, with_jdk=not by_jdk, with_threads=not by_threads, with_setting=not by_setting,
                               with_size=not by_size) for r in frame.itertuples()]
    frame = frame.assign(configuration=_told_apart(frame, labels_of), column=[_column(r, columns) for r in frame.itertuples()])
    labels = _column_labels(frame, columns)
    base_label = _baseline(frame, labels, baseline)
    duplicated = frame.duplicated(["configuration", "column"], keep="last")
    notes = describe_runs(frame) + _hardware_notes(frame) + _statistic_notes(frame)
    if by_size:
        notes.append("figures in 1000s of bytes per second, as `openssl speed` prints them (the latest run's)")
    if duplicated.any():
        notes.append(f"{duplicated.sum()} measurement(s) repeat a configuration in the same column; "
                     "the latest run's is shown")
    records, shown = _records(_in_workload_order(frame[~duplicated]), labels, base_label, by_size)
    table = pd.DataFrame(records)
    # A "vs" column with nothing to compare is noise.
    empty = [c for c in table.columns if " vs " in c and all(cell.ratio is None for cell in table[c])]
    return RunComparison(columns=labels, table=table.drop(columns=empty), notes=notes, cells=shown, baseline=base_label)


def _column_labels(frame: pd.DataFrame, columns: str) -> list[str]:
    """Each column's label once, in the order shown."""
    # Runs, hosts and settings by start; JDKs, threads and sizes in natural order.
    if columns in ("run", "host", "setting"):
        ordered = frame.sort_values("run_order", kind="stable")
    else:
        ordered = frame.sort_values("column", key=_natural, kind="stable")
    return list(dict.fromkeys(ordered.column))


def _records(frame: pd.DataFrame, labels: list[str], base_label: str,
             by_size: bool) -> tuple[list[dict[str, Any]], dict[tuple[str, str], Any]]:
    """The table's records, one per configuration, and the row behind each cell."""
    records, shown = [], {}
    by_configuration: dict[str, list] = {}  # grouped as tuples: itertuples() of each pandas group took ms
    for row in frame.itertuples():
        by_configuration.setdefault(row.configuration, []).append(row)
    for config, group in by_configuration.items():
        cells = {row.column: row for row in group}
        shown.update({(config, label): cells[label] for label in labels if label in cells})
        records.append(_record(config, cells, labels, base_label, by_size))
    return records, shown


def _record(config: str, cells: dict[str, Any], labels: list[str], base_label: str, by_size: bool) -> dict[str, Any]:
    """A configuration's record: each column's figure and its "vs" the baseline."""
    record: dict[str, Any] = {"configuration": config}
    base = cells.get(base_label)
    for label in labels:
        row = cells.get(label)
        if by_size:  # openssl speed's layout: 1000s of bytes per second by size, no ratios between sizes
            record[label] = row.openssl_kbytes_per_s if row is not None else None
            continue
        record[f"{label} ns/op"] = row.ns_per_op if row is not None else None
        if label != base_label:
            record[f"{label} vs {base_label}"] = _versus(row, base)
    return record


def _baseline(frame: pd.DataFrame, labels: list[str], baseline: str | None) -> str:
    """The baseline column: ``baseline`` as a label or a given file's first run; else the first."""
    if baseline is None:
        return labels[0]
    if baseline in labels:
        return baseline
    given = frame[[str(file) == baseline or str(file).rsplit("/", 1)[-1] == baseline for file in frame.file]]
    if not given.empty:
        return given.column.iloc[0]
    raise ValueError(f"--baseline {baseline!r} names no column; the columns are {', '.join(labels)}, "
                     "or give one of the files")


def _in_workload_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows as `compare` prints them, by their saved place (older rows by workload, then engine)."""
    if "position" in frame and frame.position.map(lambda p: isinstance(p, list)).all():
        return frame.iloc[sorted(range(len(frame)), key=lambda i: frame.position.iloc[i])]
    engines = {engine.label: i for i, engine in enumerate(ENGINES.values())}
    ranks = _first_seen_ranks(frame, ("cipher", "direction", "shape"))
    ranked = frame.assign(**{f"_{c}": rank for c, rank in ranks.items()},
                          _engine=frame.engine.map(lambda label: engines.get(label, len(engines))),
                          _slower=~frame.accelerated.astype(bool))
    keys = [*(f"_{c}" for c in ranks if c != "shape"), "message_bytes", "_engine", "_slower",
            *(["_shape"] if "shape" in ranks else [])]
    return ranked.sort_values(keys, kind="stable").drop(columns=[k for k in keys if k.startswith("_")])


def _first_seen_ranks(frame: pd.DataFrame, columns: tuple[str, ...]) -> dict[str, pd.Series]:
    """Each of ``columns`` present, its values ranked in first-seen order."""
    return {column: frame[column].map({v: i for i, v in enumerate(dict.fromkeys(frame[column]))})
            for column in columns if column in frame}


# What else tells rows apart, named only where rows share the rest; and what a row lacking it is called.
_TOLD_APART_BY = {"shape": "", "jvm_args": "no --jvm-arg", "openssl_args": "no --openssl-arg"}


def _told_apart(frame: pd.DataFrame, labels: list[str]) -> list[str]:
    """``labels`` extended where rows share one: "... 38 B stream", "... 38 B [-Xmx64m]"."""
    for column, without in ((c, w) for c, w in _TOLD_APART_BY.items() if c in frame):
        values = [value if isinstance(value, str) else "" for value in frame[column]]
        groups: dict[str, list[int]] = {}
        for index, label in enumerate(labels):
            groups.setdefault(label, []).append(index)
        for members in groups.values():
            _tell_apart_group(labels, members, values, without)
    return labels


def _tell_apart_group(labels: list[str], members: list[int], values: list[str], without: str) -> None:
    """Where ``members`` sharing a label differ in ``values``, add each one's distinguishing words."""
    if len({values[i] for i in members}) < 2:
        return
    common = set.intersection(*(set(values[i].split()) for i in members))
    for i in members:
        own = [word for word in values[i].split() if word not in common]
        labels[i] += f" [{' '.join(own) or without}]" if without else f" {' '.join(own)}"


def _statistic_notes(frame: pd.DataFrame) -> list[str]:
    """Once, where runs computed figures differently (pre-0.3.0 pooled): such ratios mix statistics."""
    if "statistic" not in frame:
        return []
    worded = frame.statistic.map(same_statistic)
    statistics = list(dict.fromkeys(worded))
    if len(statistics) < 2:
        return []
    return ["runs computed ns/op differently, so ratios between them compare different statistics: "
            + "; ".join(f"{', '.join(dict.fromkeys(frame.run[worded == s]))}: {s}" for s in statistics)]


def _column(row, columns: str) -> str:
    if columns == "jdk":
        return f"JDK {jdk_of(row)}" if jdk_of(row) else "native"
    if columns == "threads":
        return f"{threads(row)} thread(s)"
    if columns == "setting":
        return row.setting
    if columns == "size":
        return f"{row.message_bytes} bytes"
    return row.host if columns == "host" else row.run


def _natural(labels: pd.Series) -> pd.Series:
    """Natural order ("JDK 17" before "JDK 25", "native" last). Labels are hosts' text: numbers only
    as whole_number reads them, keyed (0, n) or (1, word), never int against str."""
    def key(part: str) -> tuple[int, int, str]:
        number = whole_number(part)
        return (1, 0, part) if number is None else (0, number, "")

    return labels.map(lambda text: (text == "native", [key(part) for part in text.replace(".", " ").split()]))
@dataclass(frozen=True)
class Versus:
    """A cell comparing a row with the baseline's: text for people, numbers for JSON."""
    ratio: Ratio | None  # None: nothing to compare (no row on one side)

    def __str__(self) -> str:  # "1.23x [1.10-1.37] faster", or "... not significant", or "-"
        if self.ratio is None:
            return "-"
        if not self.ratio.significant:
            return self.ratio.describe()
        return f"{self.ratio.describe()} {'faster' if self.ratio.value > 1 else 'slower'}"

    def as_dict(self) -> dict | None:
        return self.ratio.as_dict() if self.ratio else None


def _versus(row, base) -> Versus:
    """How ``row`` compares with ``base``."""
    return Versus(None if row is None or base is None else speedup(RatioKind.ACROSS, "", row, base))


def _hardware_notes(frame: pd.DataFrame) -> list[str]:
    """Cross-hardware comparisons are allowed, but said to be such."""
    machines = frame.groupby("run", sort=False)[["cpu_model", "cpu_features", "cores"]].first()
    distinct = machines.drop_duplicates()
    if len(distinct) <= 1:
        return []
    described = "; ".join(f"{run}: {m.cpu_model} [{features_text(m.cpu_features)}], {m.cores} cores" for run, m in machines.iterrows())
    return [f"different hardware, so differences are not only software: {described}"]
