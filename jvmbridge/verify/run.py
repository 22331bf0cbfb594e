"""`verify` for a host: each JDK, each mode, a sweep and the findings, as one JSON-ready document."""
from __future__ import annotations

import datetime
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from jvmbridge.forks.parent import WorkerError
from jvmbridge.host.cpu import cpu_info
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.intrinsics.verdict import Spelled, Status, combined_exit, decide
from jvmbridge.jvm.flagsource import print_flags_final
from jvmbridge.jvm.options import java_major
from jvmbridge.jvm.printflags import FlagsParseError, parse
from jvmbridge.reference import reference
from jvmbridge.verify.attribute import Finding, attribute, findings
from jvmbridge.verify.plan import DIRECTIONS, KEY_BITS, Case, cases, write_plan
from jvmbridge.verify.sweep import PATTERNS, SweepOutcome, Target, run_sweep
from jvmbridge.version import __version__

# 1: host, cpu, jdks with modes, exit_code.
SCHEMA_VERSION = 1


class Outcome(Spelled):
    """What a mode's sweep found."""
    CORRECT = "correct"
    # Right bytes, but no pass after the intrinsic compiled (switched off, or slow).
    UNCOMPILED = "correct, intrinsic not compiled"
    WRONG = "WRONG"
    CRASHED = "CRASHED"
    NOT_RUN = "could not run"

    @property
    def right(self) -> bool:
        return self in (Outcome.CORRECT, Outcome.UNCOMPILED)

    @property
    def exit_code(self) -> int:
        return 0 if self.right else 2 if self is Outcome.NOT_RUN else 1
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Sweep:
    """What to run: sizes, patterns, how long, and how many passes after the intrinsics compiled."""
    sizes: tuple[int, ...]
    patterns: tuple[str, ...] = PATTERNS
    budget: float = 30.0  # seconds per JDK, shared by its modes (reproductions come on top)
    compiled_passes: int = 2


def verify_host(targets: list[Target], modes: list[Mode], sweep: Sweep, progress: Progress | None = None,
                on_jdk: Callable[[dict], None] | None = None) -> dict:
    """``on_jdk`` gets each JDK's part when done, to save it before the next."""
    cpu = cpu_info()
    jdks = []
    for target in targets:
        jdks.append(verify_jdk(target, modes, sweep, cpu["features"], progress))
        if on_jdk:
            on_jdk(jdks[-1])
    statuses = [m["status"] for jdk in jdks for m in jdk["modes"]]
    return {"schema_version": SCHEMA_VERSION, "host": socket.gethostname(),
            "checked_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "jvmbridge_version": __version__, "cpu": cpu, "sweep": _sweep_dict(sweep),
            "jdks": jdks, "exit_code": exit_code(statuses)}


def exit_code(statuses: list[str]) -> int:
    return combined_exit(Outcome(s).exit_code for s in statuses)


def verify_jdk(target: Target, modes: list[Mode], sweep: Sweep, cpu_features: list[str],
               progress: Progress | None = None) -> dict:
    java = target.java
    planned = cases(sweep.sizes)
    budget = sweep.budget / len(modes)
    results, off = [], _intrinsics_off(target, modes, cpu_features)
    for mode in modes:
        if progress:
            progress(f"{java.label}: {mode.name}, {len(planned)} cases x {len(sweep.patterns)} call patterns")
        results.append(verify_mode(target, mode, planned, sweep, budget, cpu_features, progress, off.get(mode.name)))
    return {"java_home": str(java.home), "version": java.release_version, "vendor": java.vendor,
            "options": list(target.options), "classpath": list(target.classpath),
            "provider_class": target.provider_class, "modes": results}


def _intrinsics_off(target: Target, modes: list[Mode], cpu_features: list[str]) -> dict[str, str]:
    """Mode -> why its intrinsic cannot run here (a flag, the CPU): no compile to wait for."""
    try:
        table = parse(print_flags_final(target.java, target.options), source=str(target.java.home))
    except (WorkerError, FlagsParseError):
        return {}
    major = java_major(target.java.release_version)
    verdicts = [decide(mode, major, cpu_features, table, None) for mode in modes]
    return {v.mode: f"{v.status}: {v.reason}" for v in verdicts
            if v.status in (Status.DISABLED, Status.UNSUPPORTED, Status.NOT_USABLE)}


def verify_mode(target: Target, mode: Mode, planned: list[Case], sweep: Sweep, budget: float,
                cpu_features: list[str], progress: Progress | None = None, intrinsic_off: str | None = None) -> dict:
    """``intrinsic_off``: why the intrinsic cannot run; the Java code is then checked without waiting."""
    by_id = {c.id: c for c in planned}
    with tempfile.TemporaryDirectory(prefix="jvmbridge-verify-") as scratch:
        plan = Path(scratch) / "plan.bin"
        write_plan(plan, mode, planned)
        prove = intrinsic_off is None
        outcome = run_sweep(target, mode, plan, by_id, sweep.patterns, budget,
                            sweep.compiled_passes + (0 if prove else 1), prove=prove)
        found = findings(mode, outcome)
        if outcome.crash:
            # Which case? Rerun, each case announced first.
            traced = run_sweep(target, mode, plan, by_id, sweep.patterns, budget, sweep.compiled_passes,
                               trace=True)
            found.append(_crash_finding(mode, outcome, traced, by_id))
    if found and progress:
        progress(f"{target.java.label}: {mode.name} wrong in {', '.join(f.pattern for f in found)}: "
                 "reproducing the smallest cases in fresh JVMs with intrinsics off")
    for batch in _reproduced_together(found):
        attribute(batch, target, mode, planned, cpu_features)
    return {**_mode_dict(mode, outcome, found, len(planned), sweep, prove), "intrinsic_off": intrinsic_off}


def _reproduced_together(found: list[Finding]) -> list[list[Finding]]:
    """The findings in the batches they are reproduced in, each batch in fresh JVMs."""
    # A crash takes its JVM's patterns down: crashes are reproduced alone, if their case is known.
    batches = [[f for f in found if not f.crash], *([f] for f in found if f.crash and f.pattern in PATTERNS)]
    return [batch for batch in batches if batch]


def _crash_finding(mode: Mode, outcome: SweepOutcome, traced: SweepOutcome, by_id: dict[int, Case]) -> Finding:
    """The case the JVM died in per the traced rerun; else the first crash, case unknown."""
    if traced.crash and traced.last_traced:
        case, pattern = traced.last_traced
        return Finding(mode=mode.key, pattern=pattern, case=case, divergence=None, crash=traced.crash, groups=1)
    return Finding(mode=mode.key, pattern="unknown", case=max(by_id.values(), key=lambda c: c.size),
                   divergence=None, crash=outcome.crash, groups=1)


def _status(outcome: SweepOutcome, found: list[Finding], proved: bool) -> str:
    if outcome.crash:
        return Outcome.CRASHED
    if found:
        return Outcome.WRONG
    if outcome.error or outcome.passes == 0:
        return Outcome.NOT_RUN
    return Outcome.CORRECT if proved and outcome.compiled_passes else Outcome.UNCOMPILED


def _mode_dict(mode: Mode, outcome: SweepOutcome, found: list[Finding], case_count: int, sweep: Sweep,
               proved: bool) -> dict:
    return {"mode": mode.name, "transformation": mode.transformation, "status": _status(outcome, found, proved),
            "error": outcome.error, "cases": case_count, "groups": len(KEY_BITS) * len(DIRECTIONS), "patterns": list(sweep.patterns),
            "passes": outcome.passes, "compiled_passes": outcome.compiled_passes if proved else 0,
            "intrinsics_seen": outcome.seen, "intrinsics_expected": mode.expected,
            "mode_intrinsics_seen": [m for m in outcome.seen if any(m in path.methods for path in mode.paths)],
            "proven_after_seconds": round(outcome.proven_after, 2) if outcome.proven_after is not None else None,
            "divergent_runs": outcome.divergent_runs, "seconds": round(outcome.seconds, 1),
            "findings": [f.as_dict() for f in found]}


def _sweep_dict(sweep: Sweep) -> dict:
    return {"sizes": len(sweep.sizes), "smallest": min(sweep.sizes), "largest": max(sweep.sizes),
            "patterns": list(sweep.patterns), "budget_seconds": sweep.budget,
            "compiled_passes": sweep.compiled_passes, "key_bits": list(KEY_BITS),
            "directions": list(DIRECTIONS), "reference": reference()}
