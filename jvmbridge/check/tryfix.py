"""Try a disabled verdict's fix on the JVM first: PrintFlagsFinal shows a switch waiting to be thrown
and a missing stub alike as "{default}"; switching it on and reading back tells them apart."""
from __future__ import annotations

from dataclasses import replace

from jvmbridge.forks.parent import WorkerError
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.intrinsics.verdict import Status, Verdict
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.flagsource import flags_and_warnings
from jvmbridge.jvm.printflags import FlagsParseError, FlagTable, parse
from jvmbridge.platforms import current


def tried(verdict: Verdict, mode: Mode, java: JavaInstall, options: tuple[str, ...], flags: FlagTable) -> Verdict:
    """``verdict`` with its fix confirmed, or replaced by what the JVM said when asked."""
    here = current()
    held = here.held_off(flags.flags)
    wanted = [name for name in sorted(mode.flags) if name in flags.flags and name not in held
              and flags.flags[name].value == "false" and flags.why(flags.flags[name]) in ("default", "ergonomic")]
    if verdict.status != Status.DISABLED or not wanted:
        return verdict
    asked = [f"-XX:+{name}" for name in wanted]
    try:
        listing, said = flags_and_warnings(java, [*options, *asked])
        after = parse(listing, source=str(java.home))
    except (WorkerError, FlagsParseError) as e:
        return replace(verdict, fix=f"{verdict.fix} (not tried: {e})")
    kept_off = [name for name in wanted if after.flags[name].value != "true"]
    if not kept_off:
        return replace(verdict, fix=f"{verdict.fix} (tried: with it this JVM reports "
                                    f"{', '.join(name + '=true' for name in wanted)})")
    told = f" (it says: {'; '.join(said)})" if said else ""
    return replace(verdict, fix=f"-XX:+UnlockDiagnosticVMOptions {' '.join(asked)} leaves {', '.join(kept_off)} off "
                                f"in this JVM{told}: {'; '.join(dict.fromkeys(here.no_stub(n) for n in kept_off))}")
