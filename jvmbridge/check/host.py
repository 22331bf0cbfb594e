"""One document per host (CPU, JDKs' flags and JIT evidence, running JVMs, verdicts), plain JSON to merge."""
from __future__ import annotations

import datetime
import itertools
import socket
import time
from typing import Callable, TypedDict

from jvmbridge.check.evidence import observe
from jvmbridge.check.tryfix import tried
from jvmbridge.forks.parent import WorkerError
from jvmbridge.guard import state as guard_state
from jvmbridge.host.cpu import cpu_info
from jvmbridge.intrinsics.codecache import CodeCache, parse_codelist
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.intrinsics.verdict import Status, Verdict, decide, exit_code
from jvmbridge.jvm.attach import AttachError, code_list
from jvmbridge.jvm.discovery import JavaInstall, SkippedJdk
from jvmbridge.jvm.flagsource import print_flags_final
from jvmbridge.jvm.live import (
    ATTACH_SECONDS,
    DELETED,
    LiveJvm,
    UncheckableJvm,
    live_flags,
    live_jvm,
    live_property,
    live_version,
)
from jvmbridge.jvm.options import java_major
from jvmbridge.jvm.printflags import FlagsParseError, FlagTable, parse
from jvmbridge.platforms import current
from jvmbridge.verify.plan import cases
from jvmbridge.verify.run import Outcome, Sweep, verify_mode
from jvmbridge.verify.sweep import Target
from jvmbridge.version import __version__

# What each version added: 2 jdks[].verification, 3 live_jvms[].version, 4 live_jvms[].guard,
# 5 duration_seconds, 6 the "not usable" and "in use" verdicts and live_jvms[].code_cache,
# 7 live_jvms[].arguments (as the kernel gives them: an argument may hold spaces).
SCHEMA_VERSION = 7
Progress = Callable[[str], None]
# Each JVM may make us wait 30 s a reply: many slow fakes must not hold the timer's check for hours.
SCAN_SECONDS = 120.0


class ScanTimeUp(WorkerError):
    """The scan of running JVMs used its budget before this JVM was read."""


class FlagValue(TypedDict):
    value: str
    origin: str  # HotSpot's origin, or "follows UseAES=false, command line" (FlagTable.why)


class _Checked(TypedDict):
    verdicts: list[dict]  # Verdict.as_dict(): mode, status, reason, fix


class JdkPart(_Checked, total=False):
    """One JDK as check ran it; ``error`` instead of the rest where it could not run."""
    java_home: str
    version: str
    options: list[str]
    error: str
    flags: dict[str, FlagValue]
    evidence: dict[str, dict]  # mode -> Evidence.as_dict()
    verification: dict[str, dict]  # mode -> a `verify` mode result


class LivePart(_Checked, total=False):
    """One running JVM, read over its attach socket; ``error`` instead where it could not be."""
    pid: int
    java_home: str  # ending " (deleted)" where the JDK was removed or replaced since the JVM started
    version: str
    command_line: str  # for people: the arguments joined by spaces
    arguments: list[str]  # as the kernel gives them: what the JVM runs (metrics' main_class) is read from these
    error: str
    flags: dict[str, FlagValue]
    guard: list[dict]  # per mode what the JVM's guard agent found (ModeState.as_dict); [] without one
    code_cache: dict  # the SunJCE methods its JIT compiled ("Class::method" -> level), or why not read


class CheckDocument(TypedDict):
    """What `check --format json` prints and `fleet` collects: one host."""
    schema_version: int
    host: str
    checked_utc: str
    duration_seconds: float
    jvmbridge_version: str
    cpu: dict
    jdks: list[JdkPart]
    live_jvms: list[LivePart]
    exit_code: int


def check_host(javas: list[JavaInstall], jvm_options: tuple[str, ...], modes: list[Mode],
               pids: list[int], all_jvms: list[LiveJvm | UncheckableJvm], max_seconds: float,
               progress: Progress | None = None, verify: Sweep | None = None,
               host_name: str | None = None, left_out: list[SkippedJdk] | tuple[()] = (),
               scan_seconds: float = SCAN_SECONDS) -> CheckDocument:
    """``verify``: the short sweep each active mode gets (None: the JIT log alone); ``left_out``:
    JDKs not run (as root, another user can change them); ``all_jvms``: running JVMs, those ended
    before being read left out; ``scan_seconds``: the budget for reading them, after which the
    rest are not checked."""
    started = time.monotonic()
    cpu = cpu_info()
    jdks = [_check_jdk(java, jvm_options, modes, cpu["features"], max_seconds, progress, verify) for java in javas]
    jdks += [JdkPart(java_home=str(skipped.java.home), version=skipped.java.release_version,
                     options=list(jvm_options), error=str(skipped), verdicts=_unknown(modes, str(skipped)))
             for skipped in left_out]
    asked: list[int | LiveJvm | UncheckableJvm] = [*pids, *all_jvms]
    deadline = time.monotonic() + scan_seconds
    read = {index: _check_live(asked[index], modes, cpu["features"], deadline) for index in _turns_of_owners(asked)}
    live = [part for _, part in sorted(read.items()) if part]  # in the order asked, whatever order they were read
    verdicts = [Verdict(**v) for part in (*jdks, *live) for v in part["verdicts"]]
    return {
        "schema_version": SCHEMA_VERSION,
        "host": host_name or socket.gethostname(),
        "checked_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "duration_seconds": round(time.monotonic() - started, 3),
        "jvmbridge_version": __version__,
        "cpu": {"model": cpu["model"], "emulation": cpu["emulation"], "vm_hides": cpu["vm_hides"],
                "features": {name: {"present": None if cpu["features"] is None else name in cpu["features"],
                                    "enables": enables}
                             for name, enables in current().aes_features.items()}},
        "jdks": jdks,
        "live_jvms": live,
        "exit_code": exit_code(verdicts),
    }


def _flag_values(table: FlagTable, names: set[str]) -> dict[str, FlagValue]:
    return {name: {"value": table.flags[name].value, "origin": table.why(table.flags[name])}
            for name in sorted(names) if name in table.flags}


def _modes_flags(modes: list[Mode]) -> set[str]:
    return {name for mode in modes for name in mode.flags}


def _unknown(modes: list[Mode], reason: str) -> list[dict]:
    """Every mode's verdict when nothing could be read: could not tell, and why."""
    return [Verdict(mode=mode.name, status=Status.UNKNOWN, reason=reason).as_dict() for mode in modes]


def _check_jdk(java: JavaInstall, options: tuple[str, ...], modes: list[Mode], features: list[str],
               max_seconds: float, progress: Progress | None, verify: Sweep | None) -> JdkPart:
    entry = JdkPart(java_home=str(java.home), version=java.release_version, options=list(options), verdicts=[])
    try:
        table = parse(print_flags_final(java, options), source=str(java.home))
    except (WorkerError, FlagsParseError) as e:
        return {**entry, "error": str(e), "verdicts": _unknown(modes, str(e))}
    verdicts, evidence, verified, major = [], {}, {}, java_major(java.release_version)
    planned = cases(verify.sizes) if verify else []
    for mode in modes:
        # Flags and CPU settle "disabled" and "unsupported" without running anything.
        verdict = tried(decide(mode, major, features, table, None), mode, java, options, table)
        if verdict.status == Status.ACTIVE:
            if progress:
                progress(f"{java.label}: looking for {mode.name} intrinsics in the JIT log")
            evidence[mode.name] = observe(java, mode, options, max_seconds)
            verdict = decide(mode, major, features, table, evidence[mode.name])
        if verdict.status == Status.ACTIVE and verify:
            if progress:
                progress(f"{java.label}: checking {mode.name}'s bytes against OpenSSL")
            # The sweep's budget is per JDK, shared by the modes.
            verified[mode.name] = verify_mode(Target(java=java, options=options), mode, planned, verify,
                                              verify.budget / len(modes), features)
            verdict = with_verification(verdict, verified[mode.name])
        verdicts.append(verdict.as_dict())
    return {**entry, "flags": _flag_values(table, _modes_flags(modes)),
            "evidence": {name: e.as_dict() for name, e in evidence.items()}, "verification": verified,
            "verdicts": verdicts}


def _check_live(asked: int | LiveJvm | UncheckableJvm, modes: list[Mode], features: list[str],
                deadline: float) -> LivePart | None:
    """One JVM, whose replies are another party's text: a bad reply unchecks this JVM, never the scan."""
    try:
        return _read_live(asked, modes, features, deadline)
    except ValueError as e:
        pid = asked if isinstance(asked, int) else asked.pid
        return _unchecked_live(pid, f"its reply could not be read: {type(e).__name__}: {str(e)[:200]}", modes)


def _read_live(asked: int | LiveJvm | UncheckableJvm, modes: list[Mode], features: list[str],
               deadline: float) -> LivePart | None:
    if isinstance(asked, UncheckableJvm):
        return _unchecked_live(asked.pid, str(asked), modes)
    pid = asked if isinstance(asked, int) else asked.pid
    try:
        live = live_jvm(pid) if isinstance(asked, int) else asked
        table = parse(live_flags(live, _time_left(deadline)), source=f"pid {pid}")
        version = live_version(live, _time_left(deadline))
        guarded = live_property(live.process, guard_state.PROPERTY, _time_left(deadline))
    except (WorkerError, FlagsParseError) as e:
        if isinstance(asked, LiveJvm) and asked.process.ended():
            return None  # found by the scan, ended during the check: no longer a JVM of this host
        return _unchecked_live(pid, str(e), modes)
    java_home = str(live.java.home) + (DELETED if live.jdk_deleted else "")
    code = _code_cache(live, deadline)
    guard = guard_state.parse(guarded) if guarded else []
    verdicts = [_with_guard(decide(mode, java_major(version), features, table, None, code), guard) for mode in modes]
    return {"pid": pid, "java_home": java_home, "version": version, "command_line": live.command_line,
            "arguments": list(live.arguments),
            "flags": _flag_values(table, _modes_flags(modes)),
            "guard": [state.as_dict() for state in guard],
            "code_cache": {"error": code.error} if code.error else {"levels": code.intrinsic_levels()},
            "verdicts": [verdict.as_dict() for verdict in verdicts]}


def _turns_of_owners(asked: list[int | LiveJvm | UncheckableJvm]) -> list[int]:
    """The order to read ``asked``: named pids first, then round-robin by owner (one user's many slow
    JVMs spend the budget last)."""
    owners: dict[int | None, list[int]] = {}
    for index, one in enumerate(asked):
        owner = -1 if isinstance(one, int) else one.process.uid if isinstance(one, LiveJvm) else None
        owners.setdefault(owner, []).append(index)
    named = owners.pop(-1, [])
    return named + [index for turn in itertools.zip_longest(*owners.values()) for index in turn if index is not None]


def _time_left(deadline: float) -> float:
    """The next reply's limit: 30 s, never past the scan's deadline."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise ScanTimeUp("not checked: the scan's time ran out (every running JVM's reply shares one budget)")
    return min(ATTACH_SECONDS, left)


def _code_cache(live: LiveJvm, deadline: float) -> CodeCache:
    """What the JVM's JIT compiled (Compiler.codelist, JDK 9+), or why that could not be read."""
    try:
        return parse_codelist(code_list(live.process, _time_left(deadline)))
    except (AttachError, OSError, ScanTimeUp) as e:
        return CodeCache(error=f"Compiler.codelist: {e}")


def _with_guard(verdict: Verdict, guard: list[guard_state.ModeState]) -> Verdict:
    """The guard agent's proof inside the JVM wins over flags and code cache."""
    said = next((state for state in guard if state.mode == verdict.mode), None)
    if said is None:
        return verdict
    if said.status == "WRONG":
        return Verdict(mode=verdict.mode, status=Status.WRONG, reason=f"the guard agent in this JVM found it WRONG: "
                                                                       f"{said.detail}",
                       fix="`jvmbridge verify` on this JDK has the failing cases; the guard's log line has this one")
    if said.status == "verified" and verdict.status in (Status.ACTIVE, Status.IN_USE, Status.NOT_IN_USE):
        return Verdict(mode=verdict.mode, status=Status.VERIFIED,
                       reason=f"the guard agent in this JVM verified it: {said.detail}")
    return verdict


def _unchecked_live(pid: int, reason: str, modes: list[Mode]) -> LivePart:
    return {"pid": pid, "error": reason, "verdicts": _unknown(modes, reason)}


def with_verification(verdict: Verdict, verified: dict) -> Verdict:
    """An active verdict with what a `verify` sweep of the mode found."""
    outcome = Outcome(verified["status"])
    if outcome is Outcome.CORRECT:
        return Verdict(mode=verdict.mode, status=Status.VERIFIED,
                       reason=f"{verdict.reason}; {verified['cases']} cases x "
                              f"{len(verified['patterns'])} call patterns = OpenSSL after the JIT")
    if outcome is Outcome.UNCOMPILED:  # right bytes, but from code the JIT had not yet made intrinsic: not proven
        return Verdict(mode=verdict.mode, status=verdict.status,
                       reason=f"{verdict.reason}; verify's bytes were right, but no pass ran "
                              f"on the compiled {verified['intrinsics_expected']} within its "
                              f"{verified['seconds']:g} s (`jvmbridge verify` runs longer)")
    if not verified["findings"]:
        return Verdict(mode=verdict.mode, status=verdict.status,
                       reason=f"{verdict.reason}; verify could not run: {verified['error']}")
    first = min(verified["findings"], key=lambda f: f["size"])  # the smallest reproduction
    bug = f"; {first['known_bug_description']}" if first["known_bug_description"] else ""
    fix = (f"run with {first['workaround']} (it made the bytes right) until the JDK is updated" if first["workaround"]
           else "not known: `jvmbridge verify` has the cases; report them to the JDK's vendor")
    return Verdict(mode=verdict.mode, status=Status.WRONG,
                   reason=f"{first['pattern']} pattern, AES-{first['key_bits']} {first['direction']} "
                          f"of {first['size']} bytes: {first['what']}; {first['attribution']}{bug}",
                   fix=fix)
