"""Turn CPU features, flags and JIT evidence into one verdict per AES mode."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum

from jvmbridge.host.cpu import lacks
from jvmbridge.intrinsics.codecache import CodeCache
from jvmbridge.intrinsics.compilers import INTRINSIC_IDS, ORIGIN_PLACES, Compiling, compilers, intrinsics_taken_away
from jvmbridge.intrinsics.jitlog import Evidence
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.intrinsics.modes import Path as IntrinsicPath
from jvmbridge.jvm.printflags import FlagTable
from jvmbridge.platforms import current


class Spelled(str, Enum):
    """An enum whose members are their display text (a str: JSON writes the text)."""

    def __str__(self) -> str:
        return str.__str__(self)


class Status(Spelled):
    """A mode's verdict."""
    ACTIVE = "active"
    IN_USE = "active, in use"  # a running JVM's code cache holds the mode's intrinsic methods compiled by C2
    VERIFIED = "active, verified"  # and its bytes matched OpenSSL's after the JIT compiled it
    WRONG = "active but WRONG"  # it computed different bytes, or crashed the JVM
    NOT_IN_USE = "usable, not in use yet"  # C2 can use them, but the JVM has not run the mode hot
    DISABLED = "disabled by a flag"
    NOT_USABLE = "not usable"  # no compiler of this JVM that has the intrinsics (C2) compiles: C1 or interpreter only
    UNSUPPORTED = "unsupported by the CPU"
    NOT_OBSERVED = "not observed"
    UNKNOWN = "unknown"

    @property
    def exit_code(self) -> int:
        """0 active (or usable, not yet needed), 1 not active or wrong, 2 could not tell."""
        return {Status.ACTIVE: 0, Status.IN_USE: 0, Status.VERIFIED: 0, Status.NOT_IN_USE: 0,
                Status.NOT_OBSERVED: 2, Status.UNKNOWN: 2}.get(self, 1)

    @property
    def active(self) -> bool:
        return self in (Status.ACTIVE, Status.IN_USE, Status.VERIFIED)


@dataclass(frozen=True)
class Verdict:
    mode: str
    status: Status
    reason: str  # the condition that decided it
    fix: str = ""  # for a verdict that is not active: what to change, as concretely as is known

    def as_dict(self) -> dict:
        return asdict(self)


def decide(mode: Mode, java_major: int, cpu_features: list[str] | None, flags: FlagTable,
           evidence: Evidence | None, code: CodeCache | None = None) -> Verdict:
    """The first of CPU, flags, compilers and JIT evidence that can tell decides. ``evidence`` None:
    a running JVM, whose ``code`` cache shows what it compiled; ``cpu_features`` None: unknown."""
    paths = mode.paths_for(java_major)
    return (_by_cpu(mode, cpu_features) or _by_flags(mode, paths, flags) or _by_compilers(mode, flags)
            or _by_directives(mode, paths, flags)
            or _by_jit(mode, cpu_features, flags, evidence, _assumed_on(paths, flags), code))


def _by_cpu(mode: Mode, cpu_features: list[str] | None) -> Verdict | None:
    """UNSUPPORTED where the CPU lacks AES instructions; else None."""
    here = current()
    if not lacks(cpu_features, here.aes_feature):
        return None
    return Verdict(mode=mode.name, status=Status.UNSUPPORTED,
                   reason=f"the CPU does not report the {here.aes_feature} feature ({here.accelerator})",
                   fix=f"run on a CPU with {here.accelerator}; in a VM, give the guest the host's CPU model "
                       f"(e.g. host-passthrough) so that it sees {here.aes_feature}")


def _by_flags(mode: Mode, paths: list[IntrinsicPath], flags: FlagTable) -> Verdict | None:
    """DISABLED where flags turn every path off; UNKNOWN where a path's flag is unlisted; else None."""
    off_per_path = _off_per_path(paths, flags)
    if all(off_per_path):
        off = dict.fromkeys(name for names in off_per_path for name in names)
        held = current().held_off(flags.flags)
        return Verdict(mode=mode.name, status=Status.DISABLED,
                       reason=", ".join(_why_off(name, flags, held) for name in off),
                       fix="; ".join(dict.fromkeys(_fix(name, flags, held) for name in off)))
    hidden = _unlisted(paths, flags)
    if hidden and not flags.diagnostics_hidden:
        return Verdict(mode=mode.name, status=Status.UNKNOWN, reason=f"this JVM has no {', '.join(hidden)} flag",
                       fix=f"this JDK build has no such intrinsic for {mode.name}: a newer JDK may")
    return None


def _by_compilers(mode: Mode, flags: FlagTable) -> Verdict | None:
    """NOT_USABLE where no C2 compiles; UNKNOWN where another compiler does or it is unsaid; else None."""
    found = compilers(flags)
    if found.compiling is Compiling.C2:
        return None
    if found.compiling in (Compiling.C1_ONLY, Compiling.INTERPRETER_ONLY):
        return Verdict(mode=mode.name, status=Status.NOT_USABLE,
                       reason=f"{found.reason}: the AES intrinsics are C2's, C1 and the interpreter have none",
                       fix=found.fix)
    return Verdict(mode=mode.name, status=Status.UNKNOWN,
                   reason=f"compiled by {found.reason}: whether it uses AES intrinsics is not told by its flags")


def _by_directives(mode: Mode, paths: list[IntrinsicPath], flags: FlagTable) -> Verdict | None:
    """DISABLED where DisableIntrinsic or ControlIntrinsic takes an intrinsic from every path."""
    taken = intrinsics_taken_away(flags)
    off_per_path = [[INTRINSIC_IDS[method] for method in sorted(path.methods) if INTRINSIC_IDS.get(method) in taken]
                    for path in paths]
    if not paths or not all(off_per_path):
        return None
    off = [name for names in off_per_path for name in names]
    options = dict.fromkeys(taken[name] for name in off)
    return Verdict(mode=mode.name, status=Status.DISABLED,
                   reason=f"{', '.join(options)} takes away {', '.join(dict.fromkeys(off))}",
                   fix=f"remove {', '.join(options)} from {_directives_set_in(flags)}")


def _directives_set_in(flags: FlagTable) -> str:
    """Where -XX:DisableIntrinsic and -XX:ControlIntrinsic were set: "the JVM's command line", ..."""
    origins = {flags.flags[name].origin for name in ("DisableIntrinsic", "ControlIntrinsic")
               if name in flags.flags and flags.flags[name].value}
    return " or ".join(sorted(ORIGIN_PLACES.get(origin, origin) for origin in origins))


def _off_per_path(paths: list[IntrinsicPath], flags: FlagTable) -> list[list[str]]:
    """Per path, the flags set to false that gate it: its own, and those that turn them off here."""
    here = current()
    gates = [dict.fromkeys(gate for name in path.flags for gate in (*here.implied_off.get(name, ()), name))
             for path in paths]
    return [[name for name in names if name in flags.flags and flags.flags[name].value == "false"] for names in gates]


def _unlisted(paths: list[IntrinsicPath], flags: FlagTable) -> list[str]:
    return sorted({name for path in paths for name in path.flags if name not in flags.flags})


def _assumed_on(paths: list[IntrinsicPath], flags: FlagTable) -> str:
    """What an active verdict adds where unlisted diagnostic flags were taken at their default."""
    hidden = _unlisted(paths, flags)
    return (f"; {', '.join(hidden)} not listed (no diagnostic unlock), so at its default: on"
            if hidden and flags.diagnostics_hidden else "")


def _by_jit(mode: Mode, cpu_features: list[str] | None, flags: FlagTable, evidence: Evidence | None,
            assumed: str, code: CodeCache | None) -> Verdict:
    """What the JIT was seen to compile decides, where the CPU and flags allow the intrinsic."""
    if evidence is None:
        return _by_code_cache(mode, code, f"flags on, C2 {compilers(flags).why}", assumed)
    if evidence.error:
        return Verdict(mode=mode.name, status=Status.UNKNOWN, reason=f"the evidence run failed: {evidence.error}")
    if evidence.proven:
        slowed = current().slowed(flags.flags, cpu_features)
        return Verdict(mode=mode.name, status=Status.ACTIVE,
                       reason=f"JIT used {', '.join(evidence.seen)} (intrinsic) "
                              f"within {evidence.seconds:.1f} s{assumed}"
                              + (f"; {slowed.name}={slowed.value} [{flags.why(slowed)}]: this CPU's AVX-512/VAES "
                                 f"stubs stay unused" if slowed else ""),
                       fix=_fix_level(slowed) if slowed else "")
    seen = f"; saw only {', '.join(evidence.seen)}" if evidence.seen else ""
    return Verdict(mode=mode.name, status=Status.NOT_OBSERVED,
                   reason=f"no (intrinsic) {mode.expected} in {evidence.seconds:.1f} s{seen}",
                   fix="give the JIT longer (--mode-time); if it still does not use the intrinsic, this JDK "
                       "does not on this CPU")


def _by_code_cache(mode: Mode, code: CodeCache | None, usable: str, assumed: str) -> Verdict:
    """A running JVM that can use the intrinsics: what its code cache shows of the mode."""
    if code is None or code.error:
        why = f"its code cache could not be read: {code.error}" if code else "no JIT evidence"
        return Verdict(mode=mode.name, status=Status.ACTIVE, reason=f"{usable} (running JVM: {why}){assumed}")
    by_c2 = code.c2_compiled(mode)
    if by_c2:
        return Verdict(mode=mode.name, status=Status.IN_USE, reason=f"C2 compiled {', '.join(by_c2)}{assumed}")
    by_c1 = code.c1_compiled(mode)
    return Verdict(mode=mode.name, status=Status.NOT_IN_USE,
                   reason=f"{usable}; the JVM has not run {mode.name} hot: "
                          + (f"C1 compiled {', '.join(by_c1)}, C2 not yet" if by_c1 else
                             f"its code cache has no {mode.expected}") + assumed)


def _why_off(name: str, flags: FlagTable, held: dict) -> str:
    if name in held:
        level, need = held[name]
        return f"{name}=false [{level.name}={level.value}, {flags.why(level)}; it needs {need}]"
    return f"{name}=false [{flags.why(flags.flags[name])}]"


def _fix(name: str, flags: FlagTable, held: dict) -> str:
    """What turns ``name`` back on, from why it is off: the option to drop, or the one to add."""
    if name in held:
        return _fix_level(held[name][0])
    parent = flags.forced_off_by(flags.flags[name])
    if parent:  # UseAESCTRIntrinsics off because UseAES is: the parent is what to change
        return _fix_origin(parent.name, parent.origin)
    return _fix_origin(name, flags.flags[name].origin)


def _fix_level(level) -> str:
    """What lifts a level flag (UseSSE, UseAVX) that holds an intrinsic off or back."""
    where = ORIGIN_PLACES.get(level.origin)
    if where:
        return f"remove -XX:{level.name}={level.value} from {where}"
    return f"HotSpot chose {level.name}={level.value} [{level.origin}] for this CPU (or the VM's CPU model)"


def _fix_origin(name: str, origin: str) -> str:
    if origin == "default":
        return current().off_by_default(name)
    if origin == "ergonomic":
        return (f"HotSpot turned {name} off itself (ergonomic): it found no usable AES support on this CPU "
                "(or a lowered UseSSE/UseAVX); -XX:+" + name + " will not force it")
    where = ORIGIN_PLACES.get(origin)
    return f"remove -XX:-{name} from {where}" if where else f"undo -XX:-{name} where it was set ({origin})"


def exit_code(verdicts: list[Verdict]) -> int:
    return combined_exit(Status(v.status).exit_code for v in verdicts)


def combined_exit(codes) -> int:
    """One exit code for many: 1 if any (wrong outranks could-not-tell), else the largest; 2 if none."""
    codes = set(codes)
    return 1 if 1 in codes else max(codes, default=2)
