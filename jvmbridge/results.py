"""Result rows: one per measured configuration, with units and provenance, and the ratios between them.

Units: ns/op is nanoseconds per message; MB/s is 10^6 bytes of plaintext per second; "kB/s
(openssl)" is the 1000s-of-bytes-per-second unit of `openssl speed`'s table.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from jvmbridge.stats import Summary

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
    summary: Summary
    warmup: dict | None = None
    ciphertext: str | None = None
    details: dict = field(default_factory=dict)  # engine-specific provenance (paths, versions)
    notes: list[str] = field(default_factory=list)

    def row(self, expected_ciphertext: str) -> dict:
        s = self.summary
        ops_per_s = 1e9 / s.median_ns
        notes = list(self.notes)
        if not self.as_requested:
            notes.insert(0, f"NOT AS REQUESTED: running state is {self.verified_state}")
        if s.noisy:
            notes.append(f"noisy: rounds vary by {s.rsd:.1%} (rsd); more --iterations or a quieter machine helps")
        if self.warmup is not None and not self.warmup["steady"]:
            notes.append(f"steady state not reached in {self.warmup['seconds']:.1f} s of warm-up")
        return {
            "engine": self.engine, "implementation": self.implementation, "setting": self.setting,
            "accelerated": self.accelerated, "as_requested": self.as_requested,
            "verified_state": self.verified_state, "shape": self.shape,
            "message_bytes": self.message_bytes,
            "ns_per_op": s.median_ns, "ns_per_op_min": s.min_ns, "ns_per_op_max": s.max_ns,
            "rsd": s.rsd, "rounds": s.rounds, "iterations": s.iterations, "round_ns_per_op": list(s.per_round_ns),
            "ops_per_s": ops_per_s, "mb_per_s": ops_per_s * self.message_bytes / 1e6,
            "openssl_kbytes_per_s": ops_per_s * self.message_bytes / 1e3,
            "warmup_iterations": self.warmup["iterations"] if self.warmup else None,
            "warmup_seconds": self.warmup["seconds"] if self.warmup else None,
            "ciphertext_ok": None if self.ciphertext is None else self.ciphertext == expected_ciphertext,
            "notes": "; ".join(notes), **self.details,
        }


def to_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows as Measurement.row() made them, with the notes only the whole set can give."""
    frame = pd.DataFrame(rows)
    if not frame.empty:
        _flag_overhead(frame)
    return frame


def _flag_overhead(frame: pd.DataFrame) -> None:
    """Say where a Python-loop figure measures Python more than OpenSSL."""
    for accelerated in (True, False):
        c_loop = frame[(frame.engine == OPENSSL_CLI) & (frame.accelerated == accelerated)]
        if c_loop.empty:
            continue
        native_ns = c_loop.ns_per_op.iloc[0]
        for index in frame.index[(frame.engine == PYCA) & (frame.accelerated == accelerated)]:
            factor = frame.at[index, "ns_per_op"] / native_ns
            if factor >= OVERHEAD_DOMINATED:
                note = (f"dominated by Python overhead: {factor:.0f}x the C loop; "
                        f"~{1 - 1 / factor:.0%} of each message is Python")
                frame.at[index, "notes"] = "; ".join(filter(None, [frame.at[index, "notes"], note]))


@dataclass(frozen=True)
class Ratio:
    label: str
    value: float  # how many times faster `faster` is than `slower`, from the medians
    low: float  # the same from the least favourable pair of rounds
    high: float  # ... and the most favourable

    def as_dict(self) -> dict:
        return {"label": self.label, "times": self.value, "low": self.low, "high": self.high}


def speedup(label: str, faster: pd.Series, slower: pd.Series) -> Ratio:
    """How many times faster the row ``faster`` runs than ``slower`` (ratio of ns/op)."""
    return Ratio(label, slower.ns_per_op / faster.ns_per_op,
                 slower.ns_per_op_min / faster.ns_per_op_max, slower.ns_per_op_max / faster.ns_per_op_min)


def ratios(frame: pd.DataFrame) -> list[Ratio]:
    """Intrinsics speedup per JVM, AES-NI speedup per native engine, and JVM against native."""
    found = []

    def pick(engine: str, accelerated: bool, implementation: str | None = None):
        rows = frame[(frame.engine == engine) & (frame.accelerated == accelerated)]
        if implementation is not None:
            rows = rows[rows.implementation == implementation]
        return rows.iloc[0] if len(rows) else None

    jvms = list(dict.fromkeys(frame.implementation[frame.engine == JVM]))
    for jvm in jvms:
        on, off = pick(JVM, True, jvm), pick(JVM, False, jvm)
        if on is not None and off is not None:
            found.append(speedup(f"intrinsics speedup, {jvm}", on, off))
    for engine in (OPENSSL_CLI, PYCA):
        on, off = pick(engine, True), pick(engine, False)
        if on is not None and off is not None:
            found.append(speedup(f"AES-NI speedup, {engine}", on, off))
    # JVM against native: the C loop when available, the Python loop otherwise.
    native = OPENSSL_CLI if (frame.engine == OPENSSL_CLI).any() else PYCA
    for jvm in jvms:
        for accelerated, state in ((True, "acceleration on"), (False, "acceleration off")):
            java_row, native_row = pick(JVM, accelerated, jvm), pick(native, accelerated)
            if java_row is not None and native_row is not None:
                shapes = ("" if java_row.shape == native_row.shape
                          else f" ({java_row.shape} against {native_row.shape} shape)")
                found.append(speedup(f"JVM vs {native}, {state}, {jvm}{shapes}", java_row, native_row))
    return found
