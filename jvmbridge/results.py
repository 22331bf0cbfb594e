"""Result rows: one per measured configuration, with units and provenance, and the ratios between them.

Units: ns/op is nanoseconds per message; MB/s is 10^6 bytes of plaintext per second; "kB/s
(openssl)" is the 1000s-of-bytes-per-second unit of `openssl speed`'s table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from jvmbridge.stats import CONFIDENCE, FEW_SAMPLES, Summary

# Engines, as the report names them.
JVM = "JVM"
PYCA = "OpenSSL via pyca (Python loop)"
OPENSSL_CLI = "OpenSSL speed (C loop)"

# A Python-loop figure this many times slower than OpenSSL's C loop is mostly Python.
OVERHEAD_DOMINATED = 2.0


@dataclass
class Measurement:
    """What one engine measured in one setting, before units are derived."""
    engine: str
    implementation: str  # e.g. "SunJCE 17 on OpenJDK 17.0.15+6 (Debian)"
    setting: str  # "intrinsics on", "AES-NI off", ...
    accelerated: bool  # what was asked for
    as_requested: bool  # whether the read-back state matches what was asked for
    verified_state: str  # flags as read back from the JVM, or OpenSSL's CPUINFO capability words
    shape: str  # "message" (fresh doFinal per message) or "stream" (update into a buffer)
    message_bytes: int
    summary: Summary  # with several threads: every thread's messages over the wall time
    threads: int = 1
    warmup: dict | None = None
    ciphertext: str | None = None  # one message, before the timed loop
    # The bytes the loop itself gave after its timed rounds (JIT-compiled by then), against OpenSSL:
    # checked or not, and where they differed.
    loop_bytes_checked: bool = False
    loop_bytes_error: str | None = None
    details: dict = field(default_factory=dict)  # engine-specific provenance (paths, versions)
    notes: list[str] = field(default_factory=list)

    def row(self, expected_ciphertext: str, target_error: float | None = None) -> dict:
        """The figures in every unit, with notes on what may make them doubtful; ``target_error``:
        the relative interval the run aimed for, noted when not reached."""
        s = self.summary
        ops_per_s = 1e9 / s.median_ns
        notes = list(self.notes)
        if not self.as_requested:
            notes.insert(0, f"NOT AS REQUESTED: running state is {self.verified_state}")
        if self.loop_bytes_error:
            notes.insert(0, f"INVALID: the measured loop computed WRONG bytes ({self.loop_bytes_error}); "
                            "these figures time broken code (`jvmbridge verify` finds the cause)")
        one_shot_ok = None if self.ciphertext is None else self.ciphertext == expected_ciphertext
        doubts = [f"noisy: rounds vary by {s.rsd:.1%} (rsd)"] if s.noisy else []
        if target_error is not None and math.isfinite(s.error_ns) and s.relative_error > target_error:
            doubts.append(f"interval ±{s.relative_error:.1%} after {s.forks} fork(s), wider than the "
                          f"±{target_error * 100:g}% aimed for")
        if doubts:
            notes.append("; ".join(doubts) + "; more --max-forks, a longer --round-time or a quieter machine helps")
        if s.rounds < FEW_SAMPLES:
            notes.append(f"only {s.rounds} sample(s): the {CONFIDENCE:.1%} interval is wide or undefined; "
                         "more --rounds or --forks helps")
        if self.warmup is not None and not self.warmup["steady"]:
            notes.append(f"steady state not reached in {self.warmup['seconds']:.1f} s of warm-up")
        return {
            "engine": self.engine, "implementation": self.implementation, "setting": self.setting,
            "accelerated": self.accelerated, "as_requested": self.as_requested,
            "verified_state": self.verified_state, "shape": self.shape,
            "message_bytes": self.message_bytes,
            "ns_per_op": s.median_ns, "ns_per_op_min": s.min_ns, "ns_per_op_max": s.max_ns,
            "ns_per_op_mean": s.mean_ns, "ns_per_op_error": s.error_ns if math.isfinite(s.error_ns) else None,
            "confidence": CONFIDENCE, "rsd": s.rsd, "rounds": s.rounds, "forks": s.forks,
            "iterations": s.iterations, "round_ns_per_op": list(s.per_round_ns),
            "threads": self.threads, "ops_per_s": ops_per_s, "ops_per_s_per_thread": ops_per_s / self.threads,
            "mb_per_s": ops_per_s * self.message_bytes / 1e6,
            "openssl_kbytes_per_s": ops_per_s * self.message_bytes / 1e3,
            "warmup_iterations": self.warmup["iterations"] if self.warmup else None,
            "warmup_seconds": self.warmup["seconds"] if self.warmup else None,
            "ciphertext_ok": (one_shot_ok is not False and self.loop_bytes_error is None
                              if self.loop_bytes_checked else one_shot_ok),
            "bytes_checked_after_loop": self.loop_bytes_checked,
            "notes": "; ".join(notes), **self.details,
        }


def to_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows as Measurement.row() made them, with the notes only the whole set can give."""
    frame = pd.DataFrame(rows)
    if not frame.empty:
        _flag_overhead(frame)
    return frame


def _flag_overhead(frame: pd.DataFrame) -> None:
    """Say where a Python-loop figure measures Python more than OpenSSL (same size, same setting)."""
    keys = _operation_keys(frame)
    for values, c_loop in frame[frame.engine == OPENSSL_CLI].groupby(["accelerated", *keys]):
        native_ns = c_loop.ns_per_op.iloc[0]
        same = (frame.engine == PYCA) & (frame.accelerated == values[0])
        for key, value in zip(keys, values[1:]):
            same &= frame[key] == value
        for index in frame.index[same]:
            factor = frame.at[index, "ns_per_op"] / native_ns
            if factor >= OVERHEAD_DOMINATED:
                note = (f"dominated by Python overhead: {factor:.0f}x the C loop; "
                        f"~{1 - 1 / factor:.0%} of each message is Python")
                frame.at[index, "notes"] = "; ".join(filter(None, [frame.at[index, "notes"], note]))


@dataclass(frozen=True)
class Ratio:
    label: str
    value: float  # how many times faster `faster` is than `slower`, from the means
    low: float  # the ratio's interval, from the two means' CONFIDENCE intervals
    high: float
    significant: bool  # False when the two intervals overlap: then neither may be called faster

    def as_dict(self) -> dict:
        return {"label": self.label, "times": self.value, "low": self.low, "high": self.high,
                "confidence": CONFIDENCE, "significant": self.significant}

    def describe(self) -> str:
        """"1.23x [1.10-1.37]", or with "not significant" when the intervals overlap."""
        shown = f"{self.value:.2f}x [{self.low:.2f}-{self.high:.2f}]"
        return shown if self.significant else f"{shown} not significant"


def speedup(label: str, faster, slower) -> Ratio:
    """How many times faster the row ``faster`` runs than ``slower`` (ratio of mean ns/op, as JMH
    would compare two scores).

    Rows without an interval (a single sample) count as not significant, with an infinite range.
    """
    if wrong_bytes(faster) or wrong_bytes(slower):
        label += " (INVALID: wrong bytes)"
    error_f, error_s = (_error(row) for row in (faster, slower))
    low_f, high_f = faster.ns_per_op_mean - error_f, faster.ns_per_op_mean + error_f
    low_s, high_s = slower.ns_per_op_mean - error_s, slower.ns_per_op_mean + error_s
    # Plain floats and bools: pandas rows hand out numpy scalars, which JSON cannot encode.
    return Ratio(label, float(slower.ns_per_op_mean / faster.ns_per_op_mean), float(max(low_s, 0) / high_f),
                 float(high_s / low_f) if low_f > 0 else math.inf, bool(low_s > high_f or low_f > high_s))


def wrong_bytes(row) -> bool:
    """Whether a row's engine computed bytes other than OpenSSL's (unknown counts as not)."""
    ok = getattr(row, "ciphertext_ok", None)  # a pandas row or an itertuples() tuple
    return not missing(ok) and not bool(ok)


def missing(value) -> bool:
    """None, or the NaN pandas puts where a row lacks a column the others have."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def _error(row) -> float:
    return math.inf if missing(row.ns_per_op_error) else row.ns_per_op_error


def _operation_keys(frame: pd.DataFrame) -> list[str]:
    """The columns that make two rows the same operation (rows saved before "cipher" existed lack it)."""
    return [key for key in ("cipher", "direction", "message_bytes") if key in frame]


def ratios(frame: pd.DataFrame) -> list[Ratio]:
    """Intrinsics speedup per JVM, AES-NI speedup per native engine, and JVM against native, for
    each cipher and message size (named in the label when there are several)."""
    keys = _operation_keys(frame)
    operations = frame.groupby(keys, sort=False)
    found = []
    for values, rows in operations:
        values = values if isinstance(values, tuple) else (values,)
        named = {key: value for key, value in zip(keys, values) if frame[key].nunique() > 1}
        suffix = "".join(f", {value} B" if key == "message_bytes" else f", {value}" for key, value in named.items())
        found += [Ratio(r.label + suffix, r.value, r.low, r.high, r.significant)
                  for r in _ratios_of_one_size(rows.reset_index(drop=True))]
    return found


def _ratios_of_one_size(frame: pd.DataFrame) -> list[Ratio]:
    found = []
    # Name the shape only when an engine ran more than one (openssl speed is always a stream).
    several_shapes = frame.groupby("engine")["shape"].nunique().max() > 1

    def pick(engine: str, accelerated: bool, implementation: str | None = None, shape: str | None = None):
        rows = frame[(frame.engine == engine) & (frame.accelerated == accelerated)]
        if implementation is not None:
            rows = rows[rows.implementation == implementation]
        if shape is not None:
            rows = rows[rows["shape"] == shape]
        return rows.iloc[0] if len(rows) else None

    def named(shape: str) -> str:
        return f", {shape} shape" if several_shapes else ""

    jvms = list(dict.fromkeys(frame.implementation[frame.engine == JVM]))
    shapes = list(dict.fromkeys(frame["shape"]))
    for jvm in jvms:
        for shape in shapes:
            on, off = pick(JVM, True, jvm, shape), pick(JVM, False, jvm, shape)
            if on is not None and off is not None:
                found.append(speedup(f"intrinsics speedup, {jvm}{named(shape)}", on, off))
    for engine in (OPENSSL_CLI, PYCA):
        for shape in shapes:
            on, off = pick(engine, True, shape=shape), pick(engine, False, shape=shape)
            if on is not None and off is not None:
                found.append(speedup(f"AES-NI speedup, {engine}{named(shape)}", on, off))
    # JVM against native: the C loop when available, the Python loop otherwise.
    native = OPENSSL_CLI if (frame.engine == OPENSSL_CLI).any() else PYCA
    for jvm in jvms:
        for shape in shapes:
            for accelerated, state in ((True, "acceleration on"), (False, "acceleration off")):
                java_row = pick(JVM, accelerated, jvm, shape)
                native_row = pick(native, accelerated, shape=shape)
                native_row = native_row if native_row is not None else pick(native, accelerated)
                if java_row is not None and native_row is not None:
                    # ["shape"], not .shape: on a pandas row that is the row's dimensions.
                    java_shape, native_shape = java_row["shape"], native_row["shape"]
                    shapes_note = "" if java_shape == native_shape else f" ({java_shape} against {native_shape} shape)"
                    found.append(speedup(f"JVM vs {native}, {state}, {jvm}{shapes_note}", java_row, native_row))
    return found
