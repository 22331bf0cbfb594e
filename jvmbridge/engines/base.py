"""What an engine is (Engine), its settings as conductor workers (Sliced), and the runner's Jobs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import SHAPES, Workload

if TYPE_CHECKING:
    from jvmbridge.conductor.conduct import Forked, Worker
    from jvmbridge.engines import Matrix
    from jvmbridge.forks.parent import ChildOutcome
    from jvmbridge.results import Measurement


@dataclass
class Part:
    """One configuration a job measures: its label and workload."""
    label: str
    workload: Workload
    rank: tuple = ()  # where its row goes in the report, set by plan()
    # The configuration without the workload's tag, the same in every run, for dimensioning to find.
    name: str = ""
    rounds_basis: str = ""  # set where its rounds per fork were chosen from earlier runs: what they said


@dataclass
class Job:
    """What one round of processes measures; ``measure`` gives each part a Measurement or WorkerError."""
    label: str
    parts: list[Part]
    measure: Callable[[], Sequence["Measurement | Exception"]]
    # Its parts share one JIT: each after the first runs on code compiled on the others' profile too.
    shares_jit: bool = False
    engine: str = ""  # its engine's key, set by plan()
    arms: int = 1  # configurations measured, each process measuring its share of the parts
    # The host's yardstick beside its parts, fork by fork.
    yardstick: list["Forked"] = field(default_factory=list)
    # Forks run and why they stopped, where the conductor decided for every part.
    forks_stopped: str = ""
    # Forks set aside as host episodes, as the saved run keeps them.
    episodes: dict | None = None
    # Why its forks reached the limit with ratios still wide, and how wide.
    forks_limit: str = ""
    # A fault of jvmbridge's own that stopped its forks (the rows keep those finished), and its traceback.
    fault: str = ""
    fault_traceback: str = ""

    @property
    def parts_per_fork(self) -> int:
        """How many parts one process measures."""
        return len(self.parts) // self.arms


@dataclass
class Sliced:
    """One engine setting as a conductor worker, and how its forks become each workload's row."""
    name: str  # the configuration without the workload's tag: "JVM 17, SunJCE, intrinsics on"
    subject: str  # ... without its setting: what its speedup is about ("JVM 17, SunJCE")
    accelerated: bool
    module: str  # the worker's module (conductor.slices.serve)
    request: Mapping  # what the worker is asked, its parts (one per workload) among it
    workloads: list[tuple[Workload, str]]  # (workload, tag), in the order of its parts
    # A workload's row from its finished forks and the one that failed it (or None).
    measurement: Callable[[Workload, list["Forked"], "ChildOutcome | None"], "Measurement"]
    warmup_min_seconds: float
    warmup_max_seconds: float
    env: Mapping[str, str] | None = None
    # One line on why the worker failed (a JVM reads its crash report).
    why_failed: Callable[["ChildOutcome"], str] = lambda failed: failed.error or "the worker failed"
    # Its loop runs only whole (AESNITester, `openssl speed -multi`): a fork is one whole run, in turns.
    whole_runs: bool = False
    # What to save of a hung worker, given its pid; returns where it went.
    on_hang: Callable[[int], str] | None = None
    # An in-process worker instead of ``module``'s (tests' fake engines).
    start: Callable[[], "Worker"] | None = None


class Engine:
    key = ""  # as --engine spells it
    label = ""  # as result rows name it (their "engine")
    short_name = ""  # as ratios and the headline name it, where not by its label: without how it loops
    shapes: tuple[str, ...] = SHAPES  # shapes its loop runs; asked for another, it runs its first, once
    accelerator = ""  # what its on/off setting switches, for ratio labels: "intrinsics", "AES-NI"
    # None: the engine under question (the JVM); a number: a native reference, the lowest present wins.
    reference_rank: int | None = None
    # The shapes it is the JVM's first reference for; without --shape it leaves its others to the
    # engines made for them: one native reference per shape.
    reference_shapes: tuple[str, ...] = ()
    per_implementation = False  # one speedup ratio per implementation (each JDK and provider)
    wraps: str | None = None  # the key of the engine whose loop this one calls into (Python around C)
    overhead = ""  # what the wrapping adds, for notes: "Python"
    default = True  # runs unless --engine names others
    runs_a_count = True  # runs exactly --iterations' messages; False: counts what it did in a time (openssl speed)
    runs_on_jvms = False  # measures the JVMs of the request (--java, --all-jdks)
    # Seconds a fork takes beyond its timed rounds: the forecast's first guess until forks are timed.
    fork_overhead_seconds = 0.5

    def default_shapes(self, beside: Sequence["Engine"]) -> tuple[str, ...]:
        """Its shapes without --shape: its own, less those another of ``beside`` is the reference for."""
        if not self.reference_shapes:
            return self.shapes
        taken = {shape for engine in beside if engine is not self for shape in engine.reference_shapes}
        return tuple(shape for shape in self.shapes if shape in self.reference_shapes or shape not in taken)

    def budget(self, sampling: Sampling) -> str:
        """How each fork measures in turns, for the report header."""
        return sampling.budget()

    def timed_seconds(self, sampling: Sampling) -> float:
        """Planned seconds of one fork's timed rounds of one workload."""
        return sampling.rounds * sampling.round_seconds

    def unavailable(self, matrix: "Matrix") -> str | None:
        """Why the engine cannot run here, in one line, or None."""
        return None

    def slices(self, workloads: Sequence[Workload], matrix: "Matrix") -> bool:
        """Whether its loop can run ``workloads`` a slice at a time; else a slice is a whole run."""
        return True

    def sliced(self, workloads: list[tuple[Workload, str]], matrix: "Matrix") -> list[Sliced]:
        """Its settings as conductor workers, each measuring every (workload, tag)."""
        raise NotImplementedError

    def name(self, row, with_jdk: bool = True) -> str:
        """How reports name the row's engine, ``with_jdk`` where it ran on one."""
        return self.label

    def subject(self, implementation: str | None) -> str:
        """What a ratio of its rows is about: the engine, or one implementation."""
        return implementation or self.short_name or self.label

    def jdk(self, row) -> str | None:
        """The JDK version the row ran on; None for a native engine."""
        return None

    def implementation_text(self, row) -> str:
        """The row's implementation as the report's header names it."""
        return row.implementation

    def origin(self, row) -> str | None:
        """Where the row's implementation came from (a path), if known."""
        return None
