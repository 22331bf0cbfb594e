"""The engines a comparison runs, as plug-ins: the runner, ratios and reports loop over ``ENGINES``
and never name an engine. Adding one: an :class:`Engine` subclass and its line in ``ENGINES``."""
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
    """The native reference for the JVM's ``shape``: among ``paired`` if any, one made for it, else the lowest rank."""
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
    # One JVM per fork for every workload of a setting: cheaper, but later workloads run code compiled
    # on the others' profile too (docs/decisions/0008-a-jvm-per-workload.md).
    shared_jvm: bool = False
    # Sliced engines measured together, interleaved cycle by cycle; False: each engine in turns.
    interleaved: bool = True
    # --shape named: every engine runs every shape asked; else its default shapes.
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
