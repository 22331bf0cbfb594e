"""What an engine is (Engine), its settings as the conductor's workers (Sliced), and what the runner
measures (Jobs of Parts): the base every engine module builds on, below the registry
(jvmbridge.engines) that lists them."""
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
    """One configuration a job measures: its label (as progress and failures name it) and workload."""
    label: str
    workload: Workload
    rank: tuple = ()  # where its row goes in the report, set by plan()
    # The configuration without the workload's tag ("C loop, AES-NI on"): the same in every run
    # whatever else it measured, so earlier runs of it can be found (comparison.dimensioning).
    name: str = ""
    rounds_basis: str = ""  # set where its rounds per fork were chosen from earlier runs: what they said


@dataclass
class Job:
    """What one round of processes measures: one configuration, or several that share each fork (a
    JVM measuring every size). ``measure`` gives one outcome per part, in order: its Measurement, or
    the WorkerError that says why it has none."""
    label: str
    parts: list[Part]
    measure: Callable[[], Sequence["Measurement | Exception"]]
    # Its parts share one JIT (a JVM measuring several): each after the first runs on code compiled
    # with the others' profile too.
    shares_jit: bool = False
    engine: str = ""  # its engine's key, set by plan()
    arms: int = 1  # configurations measured, each process measuring its share of the parts
    # The host's yardstick run beside its parts, fork by fork, where it ran one (comparison.interleaved).
    yardstick: list["Forked"] = field(default_factory=list)
    # How many forks its own loop ran and why it stopped, where one decided for every part (the conductor's).
    forks_stopped: str = ""
    # The forks its own loop set aside as inside a host episode, as the saved run keeps them (comparison.interleaved).
    episodes: dict | None = None
    # Where its forks reached the limit with ratios still wider than the target: why, and how wide.
    forks_limit: str = ""

    @property
    def parts_per_fork(self) -> int:
        """How many parts one process measures."""
        return len(self.parts) // self.arms


@dataclass
class Sliced:
    """One setting of an engine as a conductor worker: one process measuring every workload in
    slices when told (jvmbridge.conductor), and how its forks become each workload's row."""
    name: str  # the configuration without the workload's tag: "JVM 17, SunJCE, intrinsics on"
    subject: str  # ... without its setting: what its speedup is about ("JVM 17, SunJCE")
    accelerated: bool
    module: str  # the worker's module (conductor.slices.serve)
    request: Mapping  # what the worker is asked, its parts (one per workload) among it
    workloads: list[tuple[Workload, str]]  # (workload, tag), in the order of its parts
    # A workload's row from the forks that finished it, and the one that failed it (or None).
    measurement: Callable[[Workload, list["Forked"], "ChildOutcome | None"], "Measurement"]
    warmup_min_seconds: float
    warmup_max_seconds: float
    env: Mapping[str, str] | None = None
    # One line on why the worker failed (a JVM reads its crash report): its error as it is, by default.
    why_failed: Callable[["ChildOutcome"], str] = lambda failed: failed.error or "the worker failed"
    # Its loop runs only whole (AESNITester's, `openssl speed -multi`'s): a slice is one whole run, a
    # fork one slice of it, in the turns schedule (conductor.conduct.Pace.turns).
    whole_runs: bool = False
    # What to save of a worker that gives no answer in time, given its pid (a JVM's threads): where it went.
    on_hang: Callable[[int], str] | None = None
    # A worker in this process in place of ``module``'s (a fake engine's, in tests): started for each fork.
    start: Callable[[], "Worker"] | None = None


class Engine:
    key = ""  # as --engine spells it
    label = ""  # as result rows name it (their "engine")
    short_name = ""  # as ratios and the headline name it, where not by its label: without how it loops
    shapes: tuple[str, ...] = SHAPES  # shapes its loop runs; asked for another, it runs its first, once
    accelerator = ""  # what its on/off setting switches, for ratio labels: "intrinsics", "AES-NI"
    # None: the engine under question (the JVM). A number: a native reference for it; the lowest
    # present is the one the JVM is held against, shape by shape after those made for the shape.
    reference_rank: int | None = None
    # The shapes it is the JVM's first reference for (the C loop: AESNITester's messages; `openssl
    # speed`: its own stream); where --shape is not named, it leaves its other shapes to the engine
    # of the run made for them: one native reference per shape (default_shapes).
    reference_shapes: tuple[str, ...] = ()
    per_implementation = False  # one speedup ratio per implementation (each JDK and provider)
    wraps: str | None = None  # the key of the engine whose loop this one calls into (Python around C)
    overhead = ""  # what the wrapping adds, for notes: "Python"
    default = True  # runs unless --engine names others
    runs_a_count = True  # runs exactly --iterations' messages; False: counts what it did in a time (openssl speed)
    runs_on_jvms = False  # measures the JVMs of the request (--java, --all-jdks)
    # Seconds a fork takes beyond its timed rounds (process start, warm-up): the time-left
    # forecast's first guess (jvmbridge.sampling.progress), until this engine's own forks have been timed.
    fork_overhead_seconds = 0.5

    def default_shapes(self, beside: Sequence["Engine"]) -> tuple[str, ...]:
        """The shapes it runs where --shape is not named, beside ``beside`` (the run's engines whose
        rows pair with the JVM's, slice by slice): its own, less those another of them is the
        reference for and it is not."""
        if not self.reference_shapes:
            return self.shapes
        taken = {shape for engine in beside if engine is not self for shape in engine.reference_shapes}
        return tuple(shape for shape in self.shapes if shape in self.reference_shapes or shape not in taken)

    def budget(self, sampling: Sampling) -> str:
        """How each of its forks measures in turns, in words for the report header."""
        return sampling.budget()

    def timed_seconds(self, sampling: Sampling) -> float:
        """How long one fork's timed rounds of one workload are planned to take (with --iterations
        unknown until measured: the rounds at their default length stand in)."""
        return sampling.rounds * sampling.round_seconds

    def unavailable(self, matrix: "Matrix") -> str | None:
        """Why the engine cannot run here, in one line (it is then left out), or None."""
        return None

    def slices(self, workloads: Sequence[Workload], matrix: "Matrix") -> bool:
        """Whether its loop can run ``workloads`` a slice at a time when told; else each slice of its
        settings (``sliced``) is a whole run (not AESNITester's, which times its run from main)."""
        return True

    def sliced(self, workloads: list[tuple[Workload, str]], matrix: "Matrix") -> list[Sliced]:
        """Its settings as conductor workers, each measuring every (workload, tag) it runs."""
        raise NotImplementedError

    def name(self, row, with_jdk: bool = True) -> str:
        """How reports name the row's engine; ``with_jdk``: with the JDK, where it ran on one."""
        return self.label

    def subject(self, implementation: str | None) -> str:
        """What a ratio of this engine's rows is about: the engine, or one implementation of it."""
        return implementation or self.short_name or self.label

    def jdk(self, row) -> str | None:
        """The JDK version the row ran on; None for a native engine."""
        return None

    def implementation_text(self, row) -> str:
        """The row's implementation as the report's header names it."""
        return row.implementation

    def origin(self, row) -> str | None:
        """Where the row's implementation came from, for the report header (a path), if known."""
        return None
