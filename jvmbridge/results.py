"""Results: what an engine measured (Measurement) and the row derived from it (Result), with notes on
what makes it doubtful. ns/op is per message; MB/s is 10^6 plaintext bytes a second; "kB/s (openssl)"
is `openssl speed`'s 1000s of bytes a second."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeVar

from jvmbridge.stats.steady import Steadiness
from jvmbridge.stats.summary import CONFIDENCE, FEW_FORKS, FORK_STATISTIC, Level, Summary

# A Python-loop figure this many times slower than the C loop it wraps is mostly Python.
OVERHEAD_DOMINATED = 2.0
# Worth saying: allocation is part of doFinal's cost.
GC_SHARE_NOTED = 0.01


class NoteKind(Enum):
    """What a note says of a row; its kind sets how loudly it shows and its hint (printed once)."""
    INVALID = "invalid"  # the loop computed wrong bytes: the figures time broken code
    NOT_AS_REQUESTED = "not-as-requested"  # the running state read back differs from the request
    NOISY = "noisy"  # rounds inside forks vary more than NOISY_RSD
    DISTURBED = "disturbed"  # rounds that lost time to other work, set aside from the figure
    LEVELS = "levels"  # forks settled at distinct speeds
    IMPRECISE = "imprecise"  # the interval is wider than the run aimed for; more forks would narrow it
    OUT_OF_REACH = "out-of-reach"  # ... and at its spread between forks not even MAX_FORKS would
    FEW_SAMPLES = "few-samples"
    NOT_STEADY = "not-steady"  # warm-up ran out before the speed settled
    FORK_FAILED = "fork-failed"  # a later fork failed: the finished forks are the measurement
    BUSY = "busy"  # the process collected garbage or compiled while its rounds were timed
    ROUNDS = "rounds"  # its rounds per fork were chosen from this host's earlier runs
    TOTAL_TIME = "total-time"  # the run's time limit stopped its forks before its stopping rule did
    PYTHON_OVERHEAD = "python-overhead"  # a Python loop measuring mostly Python
    ENGINE = "engine"  # what the engine itself says about its figure (its loop, flags, warnings)
    SHARED = "shared"  # other processes kept the machine busy while its job ran (jvmbridge.host.machine)

    @property
    def hint(self) -> str | None:
        return _HINTS.get(self)


# Noisy rounds need no advice: the interval is over forks, and IMPRECISE says when it missed.
_HINTS = {NoteKind.IMPRECISE: "more --forks (a larger first stage to decide from) or --max-forks, or a quieter machine, helps",
          NoteKind.OUT_OF_REACH: "more forks would not reach the target at this spread: a quieter machine "
                                 "would, or a wider --target-error",
          NoteKind.FEW_SAMPLES: "more --forks helps",
          NoteKind.TOTAL_TIME: "a longer --total-time, or none, gives each job the forks it wants",
          NoteKind.INVALID: "`jvmbridge verify` finds the cause",
          NoteKind.SHARED: "work on the other vCPUs slows a loop through the caches and memory they share, which "
                           "no round's counters show: without the other processes the figures would be steadier"}


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    text: str

    def as_dict(self) -> dict:
        return {"kind": self.kind.value, "text": self.text}


@dataclass
class Measurement:
    """What one engine measured in one setting, before units are derived."""
    engine: str  # the engine's label (engines.Engine.label)
    implementation: str  # e.g. "SunJCE 17 on OpenJDK 17.0.15+6 (Debian)"
    setting: str  # "intrinsics on", "AES-NI off", ...
    accelerated: bool  # what was asked for
    as_requested: bool  # whether the read-back state matches what was asked for
    verified_state: str  # flags as read back from the JVM, or OpenSSL's CPUINFO capability words
    cipher: str  # "aes-256-cbc"
    direction: str  # "encrypt" or "decrypt"
    shape: str  # "message" (fresh doFinal per message) or "stream" (update into a buffer)
    message_bytes: int
    summary: Summary  # with several threads: every thread's messages over the wall time
    threads: int = 1
    warmup: dict | None = None
    ciphertext: str | None = None  # one message, before the timed loop
    # The JIT-compiled loop's own bytes after the timed rounds, checked against OpenSSL.
    loop_bytes_checked: bool = False
    loop_bytes_error: str | None = None
    details: dict = field(default_factory=dict)  # engine-specific provenance (paths, versions)
    notes: list[str] = field(default_factory=list)  # the engine's remarks on its figure
    failed_fork: str | None = None  # why the fork after the finished ones failed
    failed_fork_number: int | None = None  # its number in the run (0-based), where known; else after its finished ones
    # Ms the process spent on other work while timed: {"gc_ms": .., "jit_ms": ..}.
    busy: dict | None = None
    fork_seconds: list[float] = field(default_factory=list)  # each fork's share of its child's wall time
    # Its job and each fork's number: ratios pair two rows of one job fork by fork.
    in_turns: str = ""
    fork_turns: list[int] = field(default_factory=list)
    # Slices interleaved cycle by cycle with its job's others: ratios pair cycles, not only forks.
    interleaved: bool = False

    def result(self, expected_ciphertext: str, rounds_basis: str = "", forks_cut: int = 0) -> "Result":
        """The figures in every unit with their notes."""
        s = self.summary
        ops_per_s = 1e9 / s.figure_ns
        one_shot_ok = None if self.ciphertext is None else self.ciphertext == expected_ciphertext
        warmup = self.warmup or {}
        return Result(
            engine=self.engine, implementation=self.implementation, setting=self.setting,
            accelerated=self.accelerated, as_requested=self.as_requested, verified_state=self.verified_state,
            cipher=self.cipher, direction=self.direction, shape=self.shape, message_bytes=self.message_bytes,
            threads=self.threads, estimate=_estimate(s),
            forks=s.forks, first_stage=s.first_stage, fork_summaries=_fork_summaries(s, self.fork_turns),
            fork_steadiness=[kind.value for kind in s.steadiness], fork_seconds=list(self.fork_seconds),
            rounds=s.rounds, disturbed_rounds=s.disturbed_rounds, iterations=s.iterations,
            timed_rounds=_timed_rounds(s),
            ops_per_s=ops_per_s, ops_per_s_per_thread=ops_per_s / self.threads,
            mb_per_s=ops_per_s * self.message_bytes / 1e6,
            openssl_kbytes_per_s=ops_per_s * self.message_bytes / 1e3,
            warmup_iterations=warmup.get("iterations"), warmup_seconds=warmup.get("seconds"),
            ciphertext_ok=(one_shot_ok is not False and self.loop_bytes_error is None
                           if self.loop_bytes_checked else one_shot_ok),
            bytes_checked_after_loop=self.loop_bytes_checked,
            # Its forks ran for its ratios: its interval is said, not held against a target.
            notes=self._notes(forks_cut)
            + ([Note(kind=NoteKind.ROUNDS, text=rounds_basis)] if rounds_basis else []),
            details=dict(self.details), rounds_basis=rounds_basis, in_turns=self.in_turns,
            interleaved=self.interleaved, other_cpus=None)

    def _notes(self, forks_cut: int = 0) -> list[Note]:
        s = self.summary
        cut = f"the run's --total-time stopped its job {forks_cut} fork(s) short of what its stopping rule wanted"
        notes = self._validity_notes() + [Note(kind=NoteKind.ENGINE, text=text) for text in self.notes]
        if s.disturbed_rounds:
            notes.append(Note(kind=NoteKind.DISTURBED, text=disturbed(s)))
        if s.noisy:
            notes.append(Note(kind=NoteKind.NOISY, text=f"noisy: rounds inside a fork vary by {s.rsd:.1%} (rsd)"))
        if precision := _precision(s):
            notes.append(precision)
        if forks_cut:
            notes.append(Note(kind=NoteKind.TOTAL_TIME, text=cut))
        if busy := self._busy_note():
            notes.append(busy)
        if self.warmup is not None and not self.warmup["steady"]:
            notes.append(Note(kind=NoteKind.NOT_STEADY, text=_warmup_ran_out(self.warmup)))
        if unsettled := unsteady(s):
            notes.append(Note(kind=NoteKind.NOT_STEADY, text=unsettled))
        return notes

    def _validity_notes(self) -> list[Note]:
        """What doubts the figures before rounds are read: wrong bytes, a failed fork, another state."""
        s, notes = self.summary, []
        if self.loop_bytes_error:
            notes.append(Note(kind=NoteKind.INVALID, text=f"INVALID: the measured loop computed WRONG bytes "
                                                          f"({self.loop_bytes_error}); these figures time broken code"))
        if self.failed_fork:
            finished = f"the {s.forks} finished fork{'s are' if s.forks > 1 else ' is'} the measurement"
            number = s.forks if self.failed_fork_number is None else self.failed_fork_number
            notes.append(Note(kind=NoteKind.FORK_FAILED, text=f"fork {number + 1} failed, {finished}: {self.failed_fork}"))
        if not self.as_requested:
            notes.append(Note(kind=NoteKind.NOT_AS_REQUESTED,
                              text=f"NOT AS REQUESTED: running state is {self.verified_state}"))
        return notes

    def _busy_note(self) -> Note | None:
        """The GC and JIT's activity during the timed rounds, where worth saying."""
        if not self.busy:
            return None
        s = self.summary
        timed_ms = s.jmh_score_ns * s.iterations / self.threads / 1e6
        gc_share = self.busy["gc_ms"] / timed_ms
        if gc_share < GC_SHARE_NOTED and not self.busy["jit_ms"]:
            return None
        return Note(kind=NoteKind.BUSY, text=f"during the timed rounds GC took {self.busy['gc_ms']} ms "
                                             f"({gc_share:.1%}) and the JIT compiled for {self.busy['jit_ms']} ms")


def _precision(s: Summary) -> Note | None:
    """How far the interval can be read: levels, or too few forks; None: as it is."""
    if s.levels:
        shown = ", ".join(f"{level.ns_per_op:,.1f}{' ns/op' if i == 0 else ''} in {level.forks} fork"
                          f"{'s' if level.forks > 1 else ''}" for i, level in enumerate(s.levels))
        return Note(kind=NoteKind.LEVELS, text=f"{len(s.levels)} levels: {shown}; forks settle at distinct speeds, "
                                               "so the figure is their mean and more forks would not narrow it")
    if s.few_forks:  # no interval worth reading, nor a spread to forecast from
        return Note(kind=NoteKind.FEW_SAMPLES, text=few_samples(s))
    return None


@dataclass(frozen=True)
class Estimate:
    """A row's figure and interval over forks (``statistic`` says how), with JMH's pooled view; ns/op."""
    ns_per_op: float  # the figure: mean over forks of each fork's lower quartile of undisturbed rounds
    error: float | None  # half-width of the `confidence` interval over forks; None: fewer than 2
    confidence: float
    statistic: str  # how ns_per_op and its interval were computed, in words
    fastest_round: float  # of the undisturbed rounds
    slowest_round: float
    levels: tuple[Level, ...]  # where forks settled at distinct speeds; else ()
    jmh_score: float  # JMH's Score: the mean of every round, pooled
    jmh_error: float | None  # JMH's Error: half-width of the 99.9% interval of that mean; None: one round
    rsd: float | None  # of rounds inside their forks (undisturbed ones); None: no fork has two


@dataclass(frozen=True)
class ForkSummary:
    """One fork in the figure; none where every round was set aside."""
    ns_per_op: float  # the lower quartile of its undisturbed rounds
    turn: int | None  # its turn beside the forks of its job's other configurations; None: not run in turns


@dataclass(frozen=True)
class Round:
    """One timed round; pre-0.3.0 rows keep only its ns/op and perhaps its fork (None elsewhere)."""
    ns_per_op: float
    iterations: int | None  # messages in it
    fork: int | None  # 0, 1, ...
    lost_share: float | None  # of its wall time, lost to run-queue wait and steal
    counters: dict | None  # its telemetry: cpu_ns, wait_ns, steal_ns, gc_ms, jit_ms where read
    set_aside: str | None  # "" (in the figure), "disturbed" or "warm-up" (before its fork settled)


@dataclass(frozen=True)
class Result:
    """One measured configuration as reported: ns per message, rates per second."""
    engine: str
    implementation: str
    setting: str
    accelerated: bool
    as_requested: bool
    verified_state: str
    cipher: str
    direction: str
    shape: str
    message_bytes: int
    threads: int
    estimate: Estimate
    forks: int  # run, including any whose every round was set aside
    first_stage: int  # the forks that decided how many ran (Stein's first stage); 0: not saved
    fork_summaries: tuple[ForkSummary, ...]  # in run order
    # Per fork run, where recorded: its steadiness and its share of its child's wall time.
    fork_steadiness: list[str]
    fork_seconds: list[float]
    rounds: int
    disturbed_rounds: int  # rounds set aside: lost more than DISTURBED_SHARE of their time to other work
    iterations: int
    timed_rounds: tuple[Round, ...]  # every round, in run order
    ops_per_s: float
    ops_per_s_per_thread: float
    mb_per_s: float
    openssl_kbytes_per_s: float
    warmup_iterations: int | None
    warmup_seconds: float | None
    ciphertext_ok: bool | None  # None: not checked
    bytes_checked_after_loop: bool
    notes: list[Note]
    details: dict  # engine-specific provenance: provider, jdk_version, java_home, command, ...
    rounds_basis: str  # where rounds per fork came from earlier runs here: what they said; "": as asked
    in_turns: str  # the job whose configurations ran their forks in turns; "": none
    interleaved: bool  # its rounds are slices run cycle by cycle with the other rows of in_turns
    # vCPUs others kept busy while its job ran (host.machine); None: not read.
    other_cpus: float | None


def _estimate(s: Summary) -> Estimate:
    return Estimate(ns_per_op=s.figure_ns, error=_finite(s.error_ns), confidence=CONFIDENCE, statistic=STATISTIC,
                    fastest_round=s.min_ns, slowest_round=s.max_ns, levels=s.levels,
                    jmh_score=s.jmh_score_ns, jmh_error=_finite(s.jmh_error_ns), rsd=s.rsd)


def _fork_summaries(s: Summary, turns: list[int]) -> tuple[ForkSummary, ...]:
    """Each summarized fork's figure, with its turn where forks ran in turns."""
    if not s.fork_of:  # every round set aside: one summary, of no one fork
        return tuple(ForkSummary(ns_per_op=ns, turn=None) for ns in s.fork_ns)
    return tuple(ForkSummary(ns_per_op=ns, turn=turns[fork] if turns else None)
                 for ns, fork in zip(s.fork_ns, s.fork_of))


def _timed_rounds(s: Summary) -> tuple[Round, ...]:
    return tuple(Round(ns_per_op=ns, iterations=n, fork=fork, lost_share=lost, counters=counters, set_aside=why)
                 for ns, n, fork, lost, counters, why in zip(s.per_round_ns, s.round_iterations, s.round_fork,
                                                             s.round_lost_share, s.round_counters, s.set_aside))


def wrong_bytes(row) -> bool:
    """Whether a row's engine computed bytes other than OpenSSL's (unknown counts as not)."""
    ok = getattr(row, "ciphertext_ok", None)  # a Result, a pandas row or an itertuples() tuple
    return not missing(ok) and not bool(ok)


def rounds_per_fork(round_fork: list[int], rounds: int, forks: int) -> list[int]:
    """Rounds each fork ran; spare rounds for disturbed ones make them differ, so the fewest is the
    count asked; older rows: rounds over forks."""
    counts = Counter(round_fork)
    return [counts[fork] for fork in sorted(counts)] or [rounds // max(forks, 1)]


T = TypeVar("T")


def by_fork(round_fork: Sequence[int], per_round: Iterable[T]) -> list[list[T]]:
    """``per_round`` (a value per round) in lists per fork, in run order; a row's forks may skip the
    run's numbers (docs/decisions/0014-forks-run-the-ratios-still-short.md)."""
    forks: dict[int, list[T]] = {}
    for fork, value in zip(round_fork, per_round):
        forks.setdefault(fork, []).append(value)
    return list(forks.values())


def missing(value) -> bool:
    """None, or the NaN pandas puts where a row lacks a column the others have."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def ran_interleaved(row) -> bool:
    """Whether a frame's row is an interleaved job's slices (False for rows lacking the column)."""
    flag = getattr(row, "interleaved", None)
    return not missing(flag) and bool(flag)


# Said once in the header; "undisturbed" and the interval are explained in the JSON's units.
STATISTIC = f"the mean of each fork's {FORK_STATISTIC} of undisturbed rounds"
# Earlier 0.3.0 wordings of the same statistic: `report` must not take a rewording for another.
EARLIER_WORDINGS = frozenset({
    "the mean over forks of each fork's lower quartile of rounds, rounds that lost more than 2% of their time to "
    "other work set aside; interval: Student's t over forks at 95%",
    "the mean over forks of each fork's lower quartile of rounds (those that lost over 2% of their time to other "
    "work set aside); Student's t over forks at 95%",
    "the mean over forks of each fork's lower quartile of rounds (those losing over 2% of their time to other work "
    "set aside); Student's t at 95%"})


def same_statistic(statistic: str) -> str:
    """A row's statistic as this version words it."""
    return STATISTIC if statistic in EARLIER_WORDINGS else statistic


def few_samples(s: Summary) -> str:
    """For too few forks: the forks' own range and how many more would give a usable interval
    (AESNITester's 2 forks of 1 round gave ±5630%)."""
    forks = len(s.fork_ns)
    more = FEW_FORKS - forks
    spread = f"; they range {min(s.fork_ns):,.1f}-{max(s.fork_ns):,.1f} ns/op" if forks > 1 else ""
    return (f"only {forks} fork(s): too few for a {CONFIDENCE:.0%} interval over forks to mean anything, so "
            f"none is shown{spread}; {more} more fork(s) (--forks {s.forks + more}) would give one")


def disturbed(s: Summary) -> str:
    """Which rounds were set aside, and how much other work took of them."""
    causes: dict[str, list[float]] = {}
    for share, counters, why in zip(s.round_lost_share, s.round_counters, s.set_aside):
        if why == "disturbed":  # one before its fork settled is counted as warm-up
            host = counters.get("steal_ns", 0) > counters.get("wait_ns", 0)
            causes.setdefault("the host took the vCPU (steal)" if host else "other threads or processes held the CPU",
                              []).append(share)
    count = sum(map(len, causes.values()))
    return f"{count} of {s.rounds} rounds disturbed, set aside: " + "; ".join(
        f"{cause} for {min(shares):.1%}" + (f"-{max(shares):.1%}" if len(shares) > 1 else "")
        + (f" of {'each' if len(shares) > 1 else 'it'}" if len(causes) == 1 else f" of {len(shares)} of them")
        for cause, shares in causes.items())


def unsteady(s: Summary) -> str | None:
    """Forks that slowed or never settled, and timed rounds set aside as warm-up; None if none."""
    odd = {kind: s.steadiness.count(kind) for kind in (Steadiness.SLOWDOWN, Steadiness.NO_STEADY_STATE)
           if kind in s.steadiness}
    said = [f"{count} of {len(s.steadiness)} forks {'slowed down, then settled' if kind is Steadiness.SLOWDOWN else 'never settled (no steady state)'}"
            for kind, count in odd.items()]
    if s.warmup_rounds:
        said.append(f"{s.warmup_rounds} timed round(s) before their fork settled set aside as warm-up")
    return "change points: " + "; ".join(said) if said else None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _warmup_ran_out(warmup: dict) -> str:
    """In how many forks warm-up ran out before the speed settled."""
    return (f"the warm-up ran out before the speed settled in {warmup['unsteady_forks']} of {warmup['forks']} "
            f"fork(s) (the longest {warmup['longest_seconds']:.1f} s)")
