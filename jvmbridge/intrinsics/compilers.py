"""Which compilers a JVM runs, from its flags, and so whether its JIT can use the AES intrinsics.

The intrinsics are C2's: flags keeping C2 from compiling turn them off whatever UseAES says. The
logic follows HotSpot's CompilerConfig (JDK 17-25; JDK 11 where noted); JVMCI is not told from flags."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from jvmbridge.jvm.printflags import Flag, FlagTable

# HotSpot's flag origins -> where to change it.
ORIGIN_PLACES = {"command line": "the JVM's command line", "environment": "JAVA_TOOL_OPTIONS or _JAVA_OPTIONS",
                 "config file": "the flags file (-XX:Flags=, .hotspotrc)"}
# CompLevel: 0 interpreter, 1-3 C1, 4 C2 (or JVMCI).
C2_LEVEL = 4


class Compiling(str, Enum):
    """What compiles a JVM's hot AES code."""
    C2 = "C2"
    C1_ONLY = "C1 only"
    INTERPRETER_ONLY = "interpreter only"
    JVMCI = "a JVMCI compiler"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Compilers:
    compiling: Compiling
    why: str  # the flags that decided it, e.g. "TieredStopAtLevel=1 [command line]"
    fix: str = ""  # what lets C2 compile again, where it does not

    @property
    def reason(self) -> str:
        """"C1 only (TieredStopAtLevel=1 [command line])" """
        return f"{self.compiling.value} ({self.why})"


def compilers(flags: FlagTable) -> Compilers:
    """Which compilers compile this JVM's hot code, as HotSpot's CompilerConfig works it out."""
    has_c1, has_c2 = _built_with(flags, "C1"), _built_with(flags, "C2")
    if not (has_c1 or has_c2):
        return Compilers(Compiling.UNKNOWN, "this JVM lists no C1 or C2 flag")
    return (_interpreter_only(flags) or _c1_only(flags, has_c1, has_c2) or _jvmci(flags)
            or (Compilers(Compiling.C2, _c2_mode(flags)) if has_c2 else
                Compilers(Compiling.UNKNOWN, "this JVM lists no C2 flag and no C1-only setting")))


def _built_with(flags: FlagTable, compiler: str) -> bool:
    """Whether this build has ``compiler``: only then its flags' kind names it ("C2 product")."""
    return any(flag.kind.startswith(compiler + " ") for flag in flags.flags.values())


def _value(flags: FlagTable, name: str) -> str | None:
    return flags.flags[name].value if name in flags.flags else None


def _set_to(flags: FlagTable, name: str, *values: str) -> Flag | None:
    """The flag ``name`` where the JVM lists it with one of ``values``; else None."""
    flag = flags.flags.get(name)
    return flag if flag is not None and flag.value in values else None


def _said(flag: Flag) -> str:
    return f"{flag.name}={flag.value} [{flag.origin}]"


def _interpreter_only(flags: FlagTable) -> Compilers | None:
    # -Xint, TieredStopAtLevel=0 and CompileThresholdScaling=0 all end in UseCompiler=false.
    use_compiler = flags.flags.get("UseCompiler")
    # JDK 11 caps compiles at TieredStopAtLevel, leaving UseCompiler on.
    stopped = _value(flags, "TieredStopAtLevel") == "0" and _value(flags, "TieredCompilation") == "true"
    if _value(flags, "UseCompiler") != "false" and not stopped:
        return None
    for name, value in (("TieredStopAtLevel", "0"), ("CompileThresholdScaling", "0.000000")):
        if (flag := _set_to(flags, name, value)) is not None and flag.origin != "default":
            return Compilers(Compiling.INTERPRETER_ONLY, _said(flag), _remove(flag))
    if use_compiler is not None and use_compiler.origin not in ("default", "ergonomic"):
        return Compilers(Compiling.INTERPRETER_ONLY, _said(use_compiler), _remove(use_compiler))
    if _value(flags, "TieredCompilation") == "true":
        # Still tiered, so it stopped compiling as it ran: a full code cache without flushing.
        return Compilers(Compiling.INTERPRETER_ONLY, "UseCompiler=false, switched off as it ran: its code cache filled up",
                         "give the JVM a larger -XX:ReservedCodeCacheSize (its log says \"CodeCache is full\")")
    return Compilers(Compiling.INTERPRETER_ONLY, "UseCompiler=false: -Xint",
                     "remove -Xint from the JVM's options (its command line, JAVA_TOOL_OPTIONS or _JAVA_OPTIONS)")


def _c1_only(flags: FlagTable, has_c1: bool, has_c2: bool) -> Compilers | None:
    """CompilerConfig::is_c1_only: tiers stopped below C2, quick-only, client emulation, or no C2."""
    if not has_c1:
        return None
    tiers = _set_to(flags, "TieredStopAtLevel", "1", "2", "3")
    if tiers is not None and _value(flags, "TieredCompilation") == "true":
        return Compilers(Compiling.C1_ONLY, _said(tiers), _remove(tiers))
    if (mode := _set_to(flags, "CompilationMode", "quick-only")) is not None:  # JDK 14+
        return Compilers(Compiling.C1_ONLY, _said(mode), _remove(mode))
    never_server = _set_to(flags, "NeverActAsServerClassMachine", "true")
    if never_server is not None and not _compilation_mode_selected(flags):
        # Client emulation (JDK 11 turns TieredCompilation off for it).
        return Compilers(Compiling.C1_ONLY, f"client emulation: {_said(never_server)}", _remove(never_server)
                         if never_server.origin in ORIGIN_PLACES else "HotSpot chose client emulation on this machine: "
                         "-XX:-NeverActAsServerClassMachine or -XX:TieredStopAtLevel=4 lifts it")
    if not has_c2 and _value(flags, "UseJVMCICompiler") != "true":
        return Compilers(Compiling.C1_ONLY, "this JVM build has no C2 (a client or minimal VM)",
                         "run a server VM, the JDK's default on 64-bit platforms")
    return None


def _compilation_mode_selected(flags: FlagTable) -> bool:
    """CompilerConfig::is_compilation_mode_selected: a compiler flag was set by anyone but HotSpot."""
    return any(name in flags.flags and flags.flags[name].origin not in ("default", "ergonomic")
               for name in ("TieredCompilation", "TieredStopAtLevel", "CompilationMode", "EnableJVMCI",
                            "UseJVMCICompiler"))


def _jvmci(flags: FlagTable) -> Compilers | None:
    flag = flags.flags.get("UseJVMCICompiler")
    if flag is None or flag.value != "true":
        return None
    return Compilers(Compiling.JVMCI, f"{_said(flag)}: its top tier is not C2, its intrinsics are its own")


def _c2_mode(flags: FlagTable) -> str:
    """CompilerConfig::is_c2_only (no tiers: -XX:-TieredCompilation, CompilationMode=high-only) or tiered."""
    tiered, mode = flags.flags.get("TieredCompilation"), flags.flags.get("CompilationMode")
    if tiered is not None and tiered.value == "false":
        return f"without tiers, {_said(tiered)}"
    if mode is not None and mode.value == "high-only":  # high-only-quick-internal needs JVMCI, else is ignored
        return f"without tiers, {_said(mode)}"
    return "tiered"


def _remove(flag: Flag) -> str:
    """The option that set ``flag``, to remove from where it was set."""
    value = f"{float(flag.value):g}" if flag.type == "double" else flag.value  # 0.000000 was given as 0
    option = {"true": f"-XX:+{flag.name}", "false": f"-XX:-{flag.name}"}.get(value, f"-XX:{flag.name}={value}")
    where = ORIGIN_PLACES.get(flag.origin)
    return f"remove {option} from {where}" if where else f"undo {option} where it was set ({flag.origin})"


# The intrinsic each SunJCE method becomes (vmIntrinsics.hpp): what DisableIntrinsic and
# ControlIntrinsic name.
INTRINSIC_IDS = {"AESCrypt::implEncryptBlock": "_aescrypt_encryptBlock",
                 "AESCrypt::implDecryptBlock": "_aescrypt_decryptBlock",
                 "CipherBlockChaining::implEncrypt": "_cipherBlockChaining_encryptAESCrypt",
                 "CipherBlockChaining::implDecrypt": "_cipherBlockChaining_decryptAESCrypt",
                 "ElectronicCodeBook::implECBEncrypt": "_electronicCodeBook_encryptAESCrypt",
                 "ElectronicCodeBook::implECBDecrypt": "_electronicCodeBook_decryptAESCrypt",
                 "CounterMode::implCrypt": "_counterMode_AESCrypt",
                 "GaloisCounterMode::implGCMCrypt0": "_galoisCounterMode_AESCrypt",
                 "GHASH::processBlocks": "_ghash_processBlocks"}


def intrinsics_taken_away(flags: FlagTable) -> dict[str, str]:
    """Intrinsic ID -> the option that turned it off, as DirectiveSet::init_control_intrinsic reads
    ControlIntrinsic ("+id"/"-id", JDK 14+) then DisableIntrinsic; ids split on ",", "\\n" or " "."""
    control: dict[str, bool] = {}
    for token in _ids(_value(flags, "ControlIntrinsic")):
        if token[:1] in "+-" and len(token) > 1:
            control[token[1:]] = token[0] == "+"
    taken = {name: f"-XX:ControlIntrinsic=-{name}" for name, on in control.items() if not on}
    taken.update({name: f"-XX:DisableIntrinsic={name}" for name in _ids(_value(flags, "DisableIntrinsic"))})
    return taken


def _ids(listed: str | None) -> list[str]:
    return (listed or "").replace(",", " ").split()
