"""What only rows side by side can say: ratios with intervals, and where a wrapping loop measures
mostly the wrapping. Which rows pair is the engines' say (engines.Engine)."""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum

import pandas as pd

from jvmbridge.conductor.pairing import fork_ratio, levels_over, over_forks
from jvmbridge.engines import ENGINES, Engine, by_label, name_of, reference_for
from jvmbridge.results import OVERHEAD_DOMINATED, Note, NoteKind, missing, ran_interleaved, wrong_bytes
from jvmbridge.stats.levels import RatioLevels
from jvmbridge.stats.summary import CONFIDENCE

# Per job (its in_turns label), each sliced row (row_name): its slices by the job's fork number,
# what a ratio's levels are read from.
Beside = Mapping[str, Mapping[str, Mapping[int, Sequence[dict]]]]


class RatioKind(Enum):
    SPEEDUP = "speedup"  # one engine, its acceleration on against off
    VERSUS = "versus"  # the JVM against the native reference, in the same acceleration state
    ACROSS = "across"  # one configuration in two runs, hosts or JDKs (`report`)


@dataclass(frozen=True)
class Ratio:
    kind: RatioKind
    label: str
    value: float  # how many times faster `faster` is than `slower`: over their pairs where they ran
    low: float  # paired (``turns`` of them: speedup), else of the rows' figures; the CONFIDENCE
    high: float  # interval over the pairs, else from the two figures' intervals in quadrature (quotient)
    significant: bool  # False when the interval holds 1
    turns: int = 0  # the pairs of forks the interval is from; 0: from the two figures' intervals
    interleaved: bool = False  # from slices that ran cycle by cycle in those forks (conductor.pairing)
    # For the headline: the engine, what it is held against, the shape, what was switched.
    of: str = ""
    against: str = ""
    shape: str = ""
    accelerator: str = ""
    operation: str = ""  # what else tells it from its like where the run has several: "16 B", "aes-128-gcm"
    # Levels one row's JIT outcome explains (stats.levels), and when the other levels come.
    levels: RatioLevels | None = None
    levels_when: str = ""

    def as_dict(self) -> dict:
        return {"kind": self.kind.value, "label": self.label, "times": self.value, "low": self.low,
                "high": self.high, "confidence": CONFIDENCE, "significant": self.significant, "paired_turns": self.turns,
                "interleaved": self.interleaved, **({"levels": self.levels.as_dict()} if self.levels else {})}

    def said_levels(self) -> str:
        """"6.69x, or 7.41x when the JIT compiles <row> its slower way: 3 forks of 12"; or ""."""
        return self.levels.said(self.levels_when) if self.levels else ""

    def describe(self, how: bool = True) -> str:
        """"1.23x [1.10-1.37]", "not significant" when it holds 1, "(paired slices, 6 forks)"."""
        if math.isinf(self.high):
            return f"{self.value:.2f}x (no interval)"
        shown = f"{self.value:.2f}x [{self.low:.2f}-{self.high:.2f}]" + ("" if self.significant else " not significant")
        shown = self.said_levels() or shown
        if not how:
            return shown
        return shown + (f" (paired slices, {self.turns} forks)" if self.interleaved else "")


def speedup(kind: RatioKind, label: str, faster, slower, one_run: bool = False,
            set_aside: Collection[int] = (), beside: Beside | None = None) -> Ratio:
    """How many times faster ``faster`` runs than ``slower``: over the forks' paired slices when
    ``one_run`` paired them (conductor.pairing.over_forks), else the quotient of their figures."""
    if wrong_bytes(faster) or wrong_bytes(slower):
        label += " (INVALID: wrong bytes)"
    interleaved = one_run and _interleaved(slower, faster)
    by_fork = paired_slices_by_fork(slower, faster, set_aside) if interleaved else []
    pairs = [r for _, r in by_fork]
    if len(pairs) < 2:
        value, low, high, significant = quotient(slower.ns_per_op, _error(slower), faster.ns_per_op, _error(faster))
        return Ratio(kind=kind, label=label, value=value, low=low, high=high, significant=significant)
    first_stage = min(int(slower.first_stage), int(faster.first_stage))
    interval = over_forks(pairs, first_stage)
    own = beside.get(slower.in_turns) if beside else None  # another job's fork k is another process
    levels = levels_over(by_fork, own) if own and len(by_fork) >= max(2, first_stage) else None
    return Ratio(kind=kind, label=label, value=interval.value, low=interval.low, high=interval.high,
                 significant=not interval.low <= 1 <= interval.high, turns=len(pairs), interleaved=interleaved,
                 levels=levels, levels_when=_levels_when(levels, row_name(slower), row_name(faster)) if levels else "")


def row_name(row) -> str:
    """A row as a ratio's levels name it: "fake subject, off, message, 16 B"."""
    return f"{name_of(row)}, {row.setting}, {row.shape}, {row.message_bytes} B"


def _levels_when(levels: RatioLevels, slower: str, faster: str) -> str:
    """When the other levels come: a higher ratio is a slower ``slower`` or a faster ``faster``."""
    higher = levels.levels[1].value > levels.levels[0].value
    way = {slower: "slower" if higher else "faster", faster: "faster" if higher else "slower"}.get(levels.row, "other")
    return f"when the JIT compiles {levels.row} its {way} way"


def beside_of(frame: pd.DataFrame) -> dict[str, dict[str, dict[int, list[dict]]]]:
    """Every row of ``frame`` that ran in slices, its slices by fork, per job (Beside)."""
    found: dict[str, dict[str, dict[int, list[dict]]]] = {}
    for row in frame.itertuples():
        if ran_interleaved(row):
            found.setdefault(row.in_turns, {})[row_name(row)] = {fork: _fork_slices(row, fork) for fork in set(row.round_fork)}
    return found


def _interleaved(top, bottom) -> bool:
    return ran_interleaved(top) and ran_interleaved(bottom) and top.in_turns == bottom.in_turns


def paired_slices(top, bottom, set_aside: Collection[int] = ()) -> list[float]:
    """Per fork both rows finished (not ``set_aside``), top's ns/op over bottom's from its slices."""
    return [ratio for _, ratio in paired_slices_by_fork(top, bottom, set_aside)]


def paired_slices_by_fork(top, bottom, set_aside: Collection[int] = ()) -> list[tuple[int, float]]:
    """paired_slices with each fork's number (a configuration's forks are the conductor's)."""
    found = []
    for fork in sorted((set(top.round_fork) & set(bottom.round_fork)) - set(set_aside)):
        if ratio := fork_ratio(_fork_slices(top, fork), _fork_slices(bottom, fork)):
            found.append((fork, ratio))
    return found


def _fork_slices(row, fork: int) -> list[dict]:
    """One fork's slices of a row (ns, iterations, telemetry)."""
    return [{**counters, "ns": ns * n, "iterations": n}
            for ns, n, counters, at in zip(row.round_ns_per_op, row.round_iterations, row.round_counters, row.round_fork)
            if at == fork]


def quotient(top: float, top_error: float, bottom: float, bottom_error: float) -> tuple[float, float, float, bool]:
    """top / bottom, its interval and whether that holds 1: each side's interval on the log scale,
    combined in quadrature (adding the half-widths would test at far more than 95%). A side without
    error leaves the other's; one reaching 0 leaves the quotient unbounded that way."""
    down = math.hypot(_log_reach(top, -top_error), _log_reach(bottom, bottom_error))
    up = math.hypot(_log_reach(top, top_error), _log_reach(bottom, -bottom_error))
    value = top / bottom
    low, high = value * math.exp(-down), value * math.exp(up)
    # JSON cannot encode the numpy scalars pandas rows hand out.
    return float(value), float(low), float(high), bool(low > 1 or high < 1)


def _log_reach(figure: float, error: float) -> float:
    """Log-scale distance from figure to figure + error; inf where that is not above 0."""
    moved = figure + error
    return abs(math.log(moved / figure)) if moved > 0 else math.inf


def _error(row) -> float:
    return math.inf if missing(row.ns_per_op_error) else row.ns_per_op_error


def operation_keys(frame: pd.DataFrame) -> list[str]:
    """The columns that make two rows the same operation (rows saved before "cipher" existed lack it)."""
    return [key for key in ("cipher", "direction", "message_bytes") if key in frame]


def overhead_notes(frame: pd.DataFrame) -> dict[int, Note]:
    """Per row index: where a loop calling another engine's (pyca around OpenSSL) is mostly wrapping."""
    keys, found = operation_keys(frame), {}
    for wrapper in ENGINES.values():
        if wrapper.wraps is None:
            continue
        inner = ENGINES[wrapper.wraps]
        for values, inner_rows in frame[frame.engine == inner.label].groupby(["accelerated", *keys]):
            same = (frame.engine == wrapper.label) & (frame.accelerated == values[0])
            for key, value in zip(keys, values[1:]):
                same &= frame[key] == value
            for index in frame.index[same]:
                factor = frame.at[index, "ns_per_op"] / inner_rows.ns_per_op.iloc[0]
                if factor >= OVERHEAD_DOMINATED:
                    found[index] = Note(kind=NoteKind.PYTHON_OVERHEAD,
                                        text=f"dominated by {wrapper.overhead} overhead: {factor:.0f}x {inner.label}; "
                                             f"~{1 - 1 / factor:.0%} of each message is {wrapper.overhead}")
    return found


def ratios(frame: pd.DataFrame, set_aside: Collection[int] = ()) -> list[Ratio]:
    """Speedups and the JVM against its native reference per operation, without ``set_aside`` forks."""
    return [ratio for ratio, _, _ in ratio_rows(frame, set_aside)]


def ratio_rows(frame: pd.DataFrame, set_aside: Collection[int] = ()) -> list[tuple[Ratio, object, object]]:
    """ratios(), each with the rows it is of: (ratio, the faster row, the slower row)."""
    keys, beside = operation_keys(frame), beside_of(frame)
    found = []
    for values, rows in frame.groupby(keys, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        named = {key: value for key, value in zip(keys, values) if frame[key].nunique() > 1}
        operation = ", ".join(f"{value} B" if key == "message_bytes" else str(value) for key, value in named.items())
        one = _OneOperation(rows, set_aside, beside)
        found += [(replace(r, label=r.label + (f", {operation}" if operation else ""), operation=operation), faster, slower)
                  for r, faster, slower in one.speedups() + one.versus_native()]
    return found


class _OneOperation:
    """One operation's rows."""

    def __init__(self, frame: pd.DataFrame, set_aside: Collection[int] = (), beside: Beside | None = None):
        self.frame, self.set_aside, self.beside = frame, set_aside, beside
        self.engines = [engine for engine in map(by_label, dict.fromkeys(frame.engine)) if engine is not None]
        self.shapes = list(dict.fromkeys(frame["shape"]))
        # Name the shape only when an engine ran several.
        several_shapes = frame.groupby("engine")["shape"].nunique().max() > 1
        self.named_shape = {shape: f", {shape} shape" if several_shapes else "" for shape in self.shapes}
        self.rows = list(frame.itertuples())  # searched as tuples: a mask and a Series per pick took ms each

    def pick(self, engine, accelerated: bool, implementation: str | None, shape: str | None):
        return next((row for row in self.rows if row.engine == engine.label and row.accelerated == accelerated
                     and (implementation is None or row.implementation == implementation)
                     and (shape is None or row.shape == shape)), None)

    def subjects(self, engine) -> list[str | None]:
        """Each JDK of a per-implementation engine that ran several; else the engine as one."""
        implementations = list(dict.fromkeys(self.frame.implementation[self.frame.engine == engine.label]))
        return implementations if engine.per_implementation and len(implementations) > 1 else [None]

    def speedups(self) -> list[tuple[Ratio, object, object]]:
        """Each engine's (JDK's) acceleration on against off, per shape, with its rows."""
        found = []
        for engine in self.engines:
            for subject in self.subjects(engine):
                for shape in self.shapes:
                    on, off = self.pick(engine, True, subject, shape), self.pick(engine, False, subject, shape)
                    if on is not None and off is not None:
                        ratio = speedup(RatioKind.SPEEDUP, f"{engine.accelerator} speedup, "
                                        f"{engine.subject(subject)}{self.named_shape[shape]}", on, off, one_run=True,
                                        set_aside=self.set_aside, beside=self.beside)
                        of = name_of(on) if engine.per_implementation else engine.subject(None)
                        found.append((replace(ratio, of=of, shape=shape, accelerator=engine.accelerator), on, off))
        return found

    def versus_native(self) -> list[tuple[Ratio, object, object]]:
        """The JVM against each shape's native reference, per acceleration state, with its rows."""
        natives = self._natives()
        found = []
        for engine in (e for e in self.engines if e.reference_rank is None):
            for subject in self.subjects(engine):
                for shape, native in natives.items():
                    for accelerated, accelerator in ((True, "on"), (False, "off")):
                        row = self.pick(engine, accelerated, subject, shape)
                        reference = self._reference_row(native, accelerated, shape)
                        if row is not None and reference is not None:
                            shapes_note = ("" if row.shape == reference.shape
                                           else f" ({row.shape} against {reference.shape} shape)")
                            ratio = speedup(RatioKind.VERSUS, f"{engine.subject(subject)} vs {native.subject(None)}, "
                                            f"acceleration {accelerator}{self.named_shape[shape]}{shapes_note}", row,
                                            reference, one_run=True, set_aside=self.set_aside, beside=self.beside)
                            found.append((replace(ratio, of=name_of(row), against=native.subject(None), shape=shape,
                                                  accelerator=accelerator), row, reference))
        return found

    def _natives(self) -> dict[str, Engine]:
        """Each shape's native reference, where it has one (engines.reference_for)."""
        interleaved = {row.engine for row in self.rows if ran_interleaved(row)}
        paired = [e for e in self.engines if e.label in interleaved]
        return {shape: native for shape in self.shapes
                if (native := reference_for(shape, self.engines, paired)) is not None}

    def _reference_row(self, native, accelerated: bool, shape: str):
        """The native reference's row in ``shape``, else in the shape it ran."""
        reference = self.pick(native, accelerated, None, shape)
        return reference if reference is not None else self.pick(native, accelerated, None, None)
