"""Turn CPU features, flags and JIT evidence into one verdict per AES mode."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from jvmbridge.intrinsics.jitlog import Evidence
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.cpu import lacks
from jvmbridge.jvm.printflags import FlagTable
from jvmbridge.platforms import current

ACTIVE = "active"
VERIFIED = "active, verified"  # and its bytes matched OpenSSL's after the JIT compiled it
WRONG = "active but WRONG"  # it computed different bytes, or crashed the JVM
DISABLED = "disabled by a flag"
UNSUPPORTED = "unsupported by the CPU"
NOT_OBSERVED = "not observed"
UNKNOWN = "unknown"

# Exit codes, as the command documents them: 0 all active, 1 something is not, 2 could not tell.
_EXIT = {ACTIVE: 0, VERIFIED: 0, WRONG: 1, DISABLED: 1, UNSUPPORTED: 1, NOT_OBSERVED: 2, UNKNOWN: 2}


@dataclass(frozen=True)
class Verdict:
    mode: str
    status: str
    reason: str  # the condition that decided it
    fix: str = ""  # for a verdict that is not active: what to change, as concretely as is known

    def as_dict(self) -> dict:
        return asdict(self)


def decide(mode: Mode, java_major: int, cpu_features: list[str] | None, flags: FlagTable,
           evidence: Evidence | None) -> Verdict:
    """``evidence`` None means a running JVM we can only read the flags of; ``cpu_features`` None
    means the CPU's features are unknown (then flags and the JIT decide)."""
    here = current()
    if lacks(cpu_features, here.aes_feature):
        return Verdict(mode.name, UNSUPPORTED, f"the CPU does not report the {here.aes_feature} feature "
                                               f"({here.accelerator})",
                       f"run on a CPU with {here.accelerator}; in a VM, give the guest the host's CPU model "
                       f"(e.g. host-passthrough) so that it sees {here.aes_feature}")
    paths = mode.paths_for(java_major)
    gates = [dict.fromkeys(gate for name in path.flags for gate in (*here.implied_off.get(name, ()), name))
             for path in paths]
    off_per_path = [[name for name in names if name in flags.flags and flags.flags[name].value == "false"]
                    for names in gates]
    if all(off_per_path):
        off = dict.fromkeys(name for names in off_per_path for name in names)
        held = here.held_off(flags.flags)
        return Verdict(mode.name, DISABLED, ", ".join(_why_off(name, flags, held) for name in off),
                       "; ".join(dict.fromkeys(_fix(name, flags, held) for name in off)))
    hidden = sorted({name for path in paths for name in path.flags if name not in flags.flags})
    assumed = (f"; {', '.join(hidden)} not listed (no diagnostic unlock), so at its default: on"
               if hidden and flags.diagnostics_hidden else "")
    if hidden and not flags.diagnostics_hidden:
        return Verdict(mode.name, UNKNOWN, f"this JVM has no {', '.join(hidden)} flag",
                       f"this JDK build has no such intrinsic for {mode.name}: a newer JDK may")
    if evidence is None:
        return Verdict(mode.name, ACTIVE, f"flags on (running JVM: flags only, no JIT evidence){assumed}")
    if evidence.error:
        return Verdict(mode.name, UNKNOWN, f"the evidence run failed: {evidence.error}")
    if evidence.proven:
        slowed = here.slowed(flags.flags, cpu_features)
        return Verdict(mode.name, ACTIVE, f"JIT used {', '.join(evidence.seen)} (intrinsic) "
                                          f"within {evidence.seconds:.1f} s{assumed}"
                       + (f"; {slowed.name}={slowed.value} [{flags.why(slowed)}]: this CPU's AVX-512/VAES "
                          f"stubs stay unused" if slowed else ""),
                       _fix_level(slowed) if slowed else "")
    seen = f"; saw only {', '.join(evidence.seen)}" if evidence.seen else ""
    return Verdict(mode.name, NOT_OBSERVED, f"no (intrinsic) {mode.expected} in {evidence.seconds:.1f} s{seen}",
                   "give the JIT longer (--max-seconds); if it still does not use the intrinsic, this JDK "
                   "does not on this CPU")


# Where a flag's value came from (HotSpot's origins) -> where to change it.
_WHERE = {"command line": "the JVM's command line", "environment": "JAVA_TOOL_OPTIONS or _JAVA_OPTIONS",
          "config file": "the flags file (-XX:Flags=, .hotspotrc)"}


def _why_off(name: str, flags: FlagTable, held: dict) -> str:
    if name in held:
        level, need = held[name]
        return f"{name}=false [{level.name}={level.value}, {flags.why(level)}; it needs {need}]"
    return f"{name}=false [{flags.why(flags.flags[name])}]"


def _fix(name: str, flags: FlagTable, held: dict) -> str:
    """What turns ``name`` back on, from why it is off: the option to drop, or the one to add."""
    if name in held:
        return _fix_level(held[name][0])
    why = flags.why(flags.flags[name])
    if why.startswith("follows "):  # "follows UseAES=false, command line": the parent is what to change
        parent, _, origin = why.removeprefix("follows ").partition("=false, ")
        return _fix_origin(parent, origin)
    return _fix_origin(name, why)


def _fix_level(level) -> str:
    """What lifts a level flag (UseSSE, UseAVX) that holds an intrinsic off or back."""
    where = _WHERE.get(level.origin)
    if where:
        return f"remove -XX:{level.name}={level.value} from {where}"
    return f"HotSpot chose {level.name}={level.value} [{level.origin}] for this CPU (or the VM's CPU model)"


def _fix_origin(name: str, origin: str) -> str:
    if origin == "default":
        return current().off_by_default(name)
    if origin == "ergonomic":
        return (f"HotSpot turned {name} off itself (ergonomic): it found no usable AES support on this CPU "
                "(or a lowered UseSSE/UseAVX); -XX:+" + name + " will not force it")
    where = _WHERE.get(origin)
    return f"remove -XX:-{name} from {where}" if where else f"undo -XX:-{name} where it was set ({origin})"


def with_verification(verdict: Verdict, verified: dict) -> Verdict:
    """An active verdict, with what a `verify` sweep of the mode (its document part) found."""
    if verified["status"].startswith("correct"):
        return Verdict(verdict.mode, VERIFIED, f"{verdict.reason}; {verified['cases']} cases x "
                                               f"{len(verified['patterns'])} call patterns = OpenSSL after the JIT")
    if not verified["findings"]:
        return Verdict(verdict.mode, verdict.status, f"{verdict.reason}; verify could not run: {verified['error']}")
    first = min(verified["findings"], key=lambda f: f["size"])  # the smallest reproduction
    bug = f"; {first['known_bug_description']}" if first["known_bug_description"] else ""
    fix = (f"run with {first['workaround']} (it made the bytes right) until the JDK is updated" if first["workaround"]
           else "not known: `jvmbridge verify` has the cases; report them to the JDK's vendor")
    return Verdict(verdict.mode, WRONG, f"{first['pattern']} pattern, AES-{first['key_bits']} {first['direction']} "
                                        f"of {first['size']} bytes: {first['what']}; {first['attribution']}{bug}", fix)


def exit_code(verdicts: list[Verdict]) -> int:
    return combined_exit(_EXIT[v.status] for v in verdicts)


def combined_exit(codes) -> int:
    """One exit code for many parts: 1 if any is 1 (something is wrong outranks could-not-tell),
    else the largest; 2 when there are none."""
    codes = set(codes)
    return 1 if 1 in codes else max(codes, default=2)
