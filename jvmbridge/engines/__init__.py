"""The engines a comparison runs, as plug-ins: what each is called, which shapes and settings it
measures, and the part it plays in ratios and notes. The runner, ratios and reports loop over
``ENGINES`` and never name an engine; ``Matrix`` is what a comparison gives them to run.

Adding an engine: one module with an :class:`Engine` subclass (jvmbridge.engines.base: ``sliced``,
its settings as conductor workers, each a worker module serving conductor.slices.serve; ``slices``,
where its loop can run the default schedule's slices), and its line in ``ENGINES`` below.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Iterable

from jvmbridge.engines.aesnitester import AesniTesterEngine
from jvmbridge.engines.base import Engine, Job, Part
from jvmbridge.engines.c_loop import CLoopEngine
from jvmbridge.engines.jvm import JvmEngine
from jvmbridge.engines.native import OpensslAeadEngine, OpensslSpeedEngine, PycaEngine
from jvmbridge.jvm.discovery import JavaInstall

__all__ = ["ENGINES", "Engine", "Job", "Matrix", "Part", "by_label", "default_engines", "jdk_of", "name_of",
           "reference_for"]

ENGINES: dict[str, Engine] = {engine.key: engine for engine in (
    JvmEngine(), AesniTesterEngine(), CLoopEngine(), PycaEngine(), OpensslSpeedEngine(), OpensslAeadEngine())}


def default_engines() -> tuple[str, ...]:
    """The keys of the engines a comparison runs when none is named."""
    return tuple(key for key, engine in ENGINES.items() if engine.default)


def reference_for(shape: str, engines: Iterable[Engine], paired: Collection[Engine] = ()) -> Engine | None:
    """The native reference, among ``engines``, that the JVM's rows of ``shape`` are held against:
    of those whose rows paired with the JVM's slice by slice (``paired``) where there are any, one
    made for the shape, else the lowest reference rank."""
    return min((engine for engine in engines if engine.reference_rank is not None), default=None,
               key=lambda engine: (engine not in paired if paired else False, shape not in engine.reference_shapes,
                                   engine.reference_rank))


@dataclass(frozen=True)
class Matrix:
    """What to run besides the workload: which engines, JVMs, providers and native tools."""
    javas: tuple[JavaInstall, ...] = ()
    jvm_options: tuple[str, ...] = ()
    providers: tuple[str, ...] = ("SunJCE",)
    classpath: tuple[str, ...] = ()
    engines: tuple[str, ...] = field(default_factory=default_engines)  # keys of ENGINES
    openssl: str | None = "openssl"
    openssl_args: tuple[str, ...] = ()  # passed to `openssl speed`, e.g. -provider NAME, -engine ID
    # One JVM per fork measures every workload of a setting: start-up and most of the warm-up paid
    # once, but each workload after the first runs on code the JIT compiled with the others'
    # profile too, up to a fifth slower. By default each workload gets JVMs of its own, as JMH forks
    # per @Param (docs/decisions/0008-a-jvm-per-workload.md).
    shared_jvm: bool = False
    # The engines whose loops run a slice when told (Engine.sliced) measured together by the
    # conductor, interleaved cycle by cycle; False: each engine's forks on their own, in turns.
    interleaved: bool = True
    # --shape named: every engine runs every shape asked; else each its default shapes (Engine.default_shapes).
    shapes_named: bool = True


def by_label(label: str) -> Engine | None:
    """The engine that wrote rows named ``label``; None for one this version does not know."""
    return next((engine for engine in ENGINES.values() if engine.label == label), None)


def name_of(row, with_jdk: bool = True) -> str:
    """The row's engine as reports name it; one this version does not know, by its label."""
    engine = by_label(row.engine)
    return engine.name(row, with_jdk) if engine else row.engine


def jdk_of(row) -> str | None:
    """The JDK version the row ran on; None for native rows."""
    engine = by_label(row.engine)
    return engine.jdk(row) if engine else None
