"""Which compilers a JVM runs, from its flags (jvmbridge.intrinsics.compilers), the verdicts they give
(no C2: "not usable"), what DisableIntrinsic/ControlIntrinsic take away, and a code cache read.

The flag tables are the lines HotSpot prints (kind and origin as JDK 11 to 25 print them); the same
rule against real JVMs of each JDK is in tests/integration/test_check_compilers.py."""
from __future__ import annotations

import pytest

from jvmbridge.check.host import _with_guard
from jvmbridge.guard.state import parse as guard_says
from jvmbridge.intrinsics.codecache import CodeCache, parse_codelist
from jvmbridge.intrinsics.compilers import Compiling, compilers, intrinsics_taken_away
from jvmbridge.intrinsics.modes import MODES
from jvmbridge.intrinsics.verdict import Status, Verdict, decide
from jvmbridge.jvm.printflags import parse
from jvmbridge.render import render

# A server VM's defaults, as PrintFlagsFinal lists them (JDK 17); a case changes some.
SERVER = {"UseCompiler": ("bool", "true", "product"), "TieredCompilation": ("bool", "true", "pd product"),
          "TieredStopAtLevel": ("intx", "4", "product"), "CompilationMode": ("ccstr", "default", "product"),
          "NeverActAsServerClassMachine": ("bool", "false", "pd product"),
          "CompileThresholdScaling": ("double", "1.000000", "product"),
          "UseJVMCICompiler": ("bool", "false", "JVMCI product"),
          "UseAES": ("bool", "true", "product"), "UseAESIntrinsics": ("bool", "true", "diagnostic"),
          "UseAESCTRIntrinsics": ("bool", "true", "diagnostic"), "UseGHASHIntrinsics": ("bool", "true", "diagnostic"),
          "C1MaxInlineSize": ("intx", "35", "C1 product"), "AliasLevel": ("intx", "3", "C2 product"),
          "DisableIntrinsic": ("ccstrlist", "", "diagnostic"), "ControlIntrinsic": ("ccstrlist", "", "diagnostic")}


def flags(changed: dict[str, tuple[str, str]] | None = None, without: tuple[str, ...] = ()):
    """The server table with ``changed`` flags (name -> value, origin), ``without`` some."""
    lines = []
    for name, (kind, value, what) in SERVER.items():
        if name not in without:
            value, origin = (changed or {}).get(name, (value, "default"))
            lines.append(f"{kind:>9} {name:<40} = {value:<40} {{{what}}} {{{origin}}}")
    return parse("\n".join(lines))


CMD = "command line"


@pytest.mark.parametrize("changed, without, compiling, fix", [
    ({}, (), Compiling.C2, ""),
    # -Xint: UseCompiler off by HotSpot itself, TieredCompilation off "command line" (check_args_consistency)
    ({"UseCompiler": ("false", "default"), "TieredCompilation": ("false", CMD)}, (), Compiling.INTERPRETER_ONLY,
     "remove -Xint from the JVM's options (its command line, JAVA_TOOL_OPTIONS or _JAVA_OPTIONS)"),
    ({"UseCompiler": ("false", CMD)}, (), Compiling.INTERPRETER_ONLY, "remove -XX:-UseCompiler from the JVM's command line"),
    # HotSpot itself stops compiling when the code cache is full, tiers left as they were
    ({"UseCompiler": ("false", "default")}, (), Compiling.INTERPRETER_ONLY,
     'give the JVM a larger -XX:ReservedCodeCacheSize (its log says "CodeCache is full")'),
    ({"UseCompiler": ("false", CMD), "TieredStopAtLevel": ("0", CMD)}, (), Compiling.INTERPRETER_ONLY,
     "remove -XX:TieredStopAtLevel=0 from the JVM's command line"),
    # JDK 11 leaves UseCompiler on with TieredStopAtLevel=0; its tiered policy compiles nothing
    ({"TieredStopAtLevel": ("0", CMD)}, ("CompilationMode",), Compiling.INTERPRETER_ONLY,
     "remove -XX:TieredStopAtLevel=0 from the JVM's command line"),
    ({"UseCompiler": ("false", "default"), "CompileThresholdScaling": ("0.000000", "environment")}, (),
     Compiling.INTERPRETER_ONLY, "remove -XX:CompileThresholdScaling=0 from JAVA_TOOL_OPTIONS or _JAVA_OPTIONS"),
    ({"TieredStopAtLevel": ("1", CMD)}, (), Compiling.C1_ONLY, "remove -XX:TieredStopAtLevel=1 from the JVM's command line"),
    ({"TieredStopAtLevel": ("2", "environment")}, (), Compiling.C1_ONLY,
     "remove -XX:TieredStopAtLevel=2 from JAVA_TOOL_OPTIONS or _JAVA_OPTIONS"),
    ({"TieredStopAtLevel": ("3", CMD)}, (), Compiling.C1_ONLY, "remove -XX:TieredStopAtLevel=3 from the JVM's command line"),
    # TieredStopAtLevel matters only with tiers (CompilerConfig::is_c1_only): without them C2 compiles
    ({"TieredStopAtLevel": ("1", CMD), "TieredCompilation": ("false", CMD)}, (), Compiling.C2, ""),
    ({"CompilationMode": ("quick-only", CMD)}, (), Compiling.C1_ONLY,
     "remove -XX:CompilationMode=quick-only from the JVM's command line"),
    ({"CompilationMode": ("high-only", CMD)}, (), Compiling.C2, ""),
    ({"TieredCompilation": ("false", CMD)}, (), Compiling.C2, ""),
    # client emulation, JDK 17+ (TieredCompilation stays on) and JDK 11 (turned off, ergonomic)
    ({"NeverActAsServerClassMachine": ("true", CMD)}, (), Compiling.C1_ONLY,
     "remove -XX:+NeverActAsServerClassMachine from the JVM's command line"),
    ({"NeverActAsServerClassMachine": ("true", CMD), "TieredCompilation": ("false", "ergonomic")}, ("CompilationMode",),
     Compiling.C1_ONLY, "remove -XX:+NeverActAsServerClassMachine from the JVM's command line"),
    # ... but not where a compilation mode was chosen (is_compilation_mode_selected)
    ({"NeverActAsServerClassMachine": ("true", CMD), "TieredStopAtLevel": ("4", CMD)}, (), Compiling.C2, ""),
    ({}, ("AliasLevel",), Compiling.C1_ONLY, "run a server VM, the JDK's default on 64-bit platforms"),
    ({"UseJVMCICompiler": ("true", CMD)}, (), Compiling.JVMCI, ""),
    ({"UseJVMCICompiler": ("true", CMD), "TieredStopAtLevel": ("1", CMD)}, (), Compiling.C1_ONLY,
     "remove -XX:TieredStopAtLevel=1 from the JVM's command line"),
    ({}, ("AliasLevel", "C1MaxInlineSize"), Compiling.UNKNOWN, ""),
])
def test_the_compilers_a_jvm_runs_come_from_hotspots_own_rule(changed, without, compiling, fix):
    found = compilers(flags(changed, without))
    assert (found.compiling, found.fix) == (compiling, fix)


def test_a_jvm_without_c2_is_not_usable_in_every_mode_and_says_the_fix():
    for mode in MODES.values():
        verdict = decide(mode, 17, ["aes"], flags({"TieredStopAtLevel": ("1", CMD)}), None)
        assert verdict.status == Status.NOT_USABLE
        assert verdict.reason.startswith("C1 only (TieredStopAtLevel=1 [command line]): the AES intrinsics are C2's")
        assert verdict.fix == "remove -XX:TieredStopAtLevel=1 from the JVM's command line"
        assert Status.NOT_USABLE.exit_code == 1 and not Status.NOT_USABLE.active


def test_a_jvmci_compiler_is_unknown_never_active():
    verdict = decide(MODES["cbc"], 21, ["aes"], flags({"UseJVMCICompiler": ("true", CMD)}), None)
    assert verdict.status == Status.UNKNOWN and "a JVMCI compiler" in verdict.reason


def test_disable_and_control_intrinsic_take_away_what_hotspot_reads_from_them():
    # Given twice, a ccstrlist spans lines (`+=`); HotSpot splits on ",", "\n" and " ".
    text = "\n".join([
        "ccstrlist DisableIntrinsic                         = _aescrypt_encryptBlock",
        "          DisableIntrinsic                        += _ghash_processBlocks,_counterMode_AESCrypt",
        "          DisableIntrinsic                        += _aescrypt_decryptBlock                 "
        "{diagnostic} {command line}",
        "ccstrlist ControlIntrinsic                         = -_cipherBlockChaining_encryptAESCrypt,+_md5_implCompress,"
        "-_galoisCounterMode_AESCrypt,+_galoisCounterMode_AESCrypt {diagnostic} {command line}",
        "     bool UseAES                                   = true            {product} {default}"])
    table = parse(text)
    assert table.flags["DisableIntrinsic"].value == ("_aescrypt_encryptBlock\n_ghash_processBlocks,_counterMode_AESCrypt"
                                                     "\n_aescrypt_decryptBlock")
    assert intrinsics_taken_away(table) == {
        "_cipherBlockChaining_encryptAESCrypt": "-XX:ControlIntrinsic=-_cipherBlockChaining_encryptAESCrypt",
        "_aescrypt_encryptBlock": "-XX:DisableIntrinsic=_aescrypt_encryptBlock",
        "_ghash_processBlocks": "-XX:DisableIntrinsic=_ghash_processBlocks",
        "_counterMode_AESCrypt": "-XX:DisableIntrinsic=_counterMode_AESCrypt",
        "_aescrypt_decryptBlock": "-XX:DisableIntrinsic=_aescrypt_decryptBlock"}


def test_a_mode_whose_every_path_lost_its_intrinsic_is_disabled_by_that_option():
    table = flags({"DisableIntrinsic": ("_counterMode_AESCrypt", CMD)})
    ctr = decide(MODES["ctr"], 17, ["aes"], table, None)
    assert ctr.status == Status.DISABLED
    assert ctr.reason == "-XX:DisableIntrinsic=_counterMode_AESCrypt takes away _counterMode_AESCrypt"
    assert ctr.fix == "remove -XX:DisableIntrinsic=_counterMode_AESCrypt from the JVM's command line"
    # GCM on JDK 17 has only the CTR + GHASH path; on 25 its own stub is left.
    assert decide(MODES["gcm"], 17, ["aes"], table, None).status == Status.DISABLED
    assert decide(MODES["gcm"], 25, ["aes"], table, None).status == Status.ACTIVE
    assert decide(MODES["cbc"], 17, ["aes"], table, None).status == Status.ACTIVE


# Lines as JDK 17's Compiler.codelist printed them for a JVM that ran AES-CBC hot (state 0 in use, 2 not entrant).
CODELIST = """\
188 4 0 com.sun.crypto.provider.AESCrypt.implEncryptBlock([BI[BI)V [0x00007f, 0x00007f - 0x00007f]
200 4 0 com.sun.crypto.provider.CipherBlockChaining.implEncrypt([BII[BI)I [0x00007f, 0x00007f - 0x00007f]
191 3 2 com.sun.crypto.provider.CipherBlockChaining.implEncrypt([BII[BI)I [0x00007f, 0x00007f - 0x00007f]
212 3 0 com.sun.crypto.provider.CounterMode.implCrypt([BII[BI)I [0x00007f, 0x00007f - 0x00007f]
213 4 2 com.sun.crypto.provider.GHASH.processBlocks([BII[J[J)V [0x00007f, 0x00007f - 0x00007f]
not a line at all
9 ² 0 com.sun.crypto.provider.CipherBlockChaining.implDecrypt([BII[BI)I
"""


def test_a_code_cache_tells_c2_code_in_use_from_c1_code_and_from_none():
    cache = parse_codelist(CODELIST)
    by = {name: decide(MODES[name], 17, ["aes"], flags(), None, cache) for name in ("cbc", "ctr", "gcm")}
    assert by["cbc"].status == Status.IN_USE and by["cbc"].reason == "C2 compiled CipherBlockChaining::implEncrypt"
    assert by["ctr"].status == Status.NOT_IN_USE
    assert by["ctr"].reason.endswith("the JVM has not run CTR hot: C1 compiled CounterMode::implCrypt, C2 not yet")
    # GHASH's C2 code is no longer entrant (state 2): not in use
    assert by["gcm"].status == Status.NOT_IN_USE and "GHASH" not in by["gcm"].reason
    assert "its code cache has no GaloisCounterMode::implGCMCrypt0" in decide(
        MODES["gcm"], 25, ["aes"], flags(), None, parse_codelist("")).reason
    assert Status.NOT_IN_USE.exit_code == 0 and Status.IN_USE.active


def test_a_code_cache_that_could_not_be_read_leaves_the_flags_verdict_and_says_why():
    verdict = decide(MODES["cbc"], 11, ["aes"], flags(), None, CodeCache(error="Compiler.codelist: unknown command"))
    assert verdict.status == Status.ACTIVE
    assert verdict.reason.startswith("flags on, C2 tiered (running JVM: its code cache could not be read: Compiler.")


def test_a_decrypting_server_counts_as_running_the_mode():
    cache = parse_codelist("7 4 0 com.sun.crypto.provider.CipherBlockChaining.implDecrypt([BII[BI)I [0x1, 0x2 - 0x3]\n")
    assert decide(MODES["cbc"], 17, ["aes"], flags(), None, cache).status == Status.IN_USE


def _document(*verdicts: tuple[str, str]) -> dict:
    return {"schema_version": 6, "host": "web-1", "checked_utc": "2026-12-06T10:00:00+00:00", "duration_seconds": 1.5,
            "jvmbridge_version": "0", "exit_code": 1, "jdks": [],
            "cpu": {"model": "x", "emulation": None, "vm_hides": [], "features": {}},
            "live_jvms": [{"pid": 7, "java_home": "/jdk", "version": "17.0.15", "command_line": "java -jar app.jar",
                           "arguments": ["java", "-jar", "app.jar"],
                           "flags": {}, "guard": [], "code_cache": {"levels": {}},
                           "verdicts": [{"mode": mode, "status": status, "reason": "why",
                                         "fix": "remove -XX:TieredStopAtLevel=1 from the JVM's command line"
                                         if status == "not usable" else ""} for mode, status in verdicts]}]}


def test_not_usable_and_not_in_use_in_the_metrics_and_the_answer_line():
    document = _document(("CBC", "not usable"), ("CTR", "usable, not in use yet"), ("GCM", "active, in use"))
    metrics = render("check", "openmetrics", document)
    assert 'mode="CBC",state="not_usable"} 1' in metrics and 'mode="GCM",state="in_use"} 1' in metrics
    active = [line for line in metrics.splitlines() if line.startswith("jvmbridge_aes_intrinsics_active{")]
    # Not in use yet is neither 1 nor 0: the JVM could use them, it has not needed the mode.
    assert [(line.split('mode="')[1][:3], line[-1]) for line in active] == [("CBC", "0"), ("GCM", "1")]
    lines = render("check", "table", document).splitlines()
    assert lines[:3] == ["AES acceleration is NOT active somewhere (see below).",
                         "  pid 7 app.jar: CBC not usable; CTR usable, not in use yet; GCM active, in use "
                         "(fix: remove -XX:TieredStopAtLevel=1 from the JVM's command line)",
                         "  (checked in 1.5 s)"]


def test_the_guard_in_the_jvm_wins_over_its_code_cache():
    guard = guard_says("CBC verified 2026-12-06T10:00:00Z (5 passes); CTR WRONG 2026-12-06T10:01:00Z (updates pattern)")
    waiting = Verdict(mode="CBC", status=Status.NOT_IN_USE, reason="not hot yet")
    assert _with_guard(waiting, guard).status == Status.VERIFIED
    assert _with_guard(waiting, guard).reason.startswith("the guard agent in this JVM verified it: 2026-12-06T10:00")
    assert _with_guard(Verdict(mode="CTR", status=Status.IN_USE, reason="C2"), guard).status == Status.WRONG
    # A JVM without C2 stays not usable: the guard cannot have proven a compiled intrinsic there.
    c1 = Verdict(mode="CBC", status=Status.NOT_USABLE, reason="C1 only")
    assert _with_guard(c1, guard) == c1


def test_a_mode_the_guards_provider_does_not_serve_leaves_the_jvms_verdict():
    # Not applicable: the guard's provider (SunPCSC) has no such Cipher, which says nothing of the JVM's AES.
    guard = guard_says("CTR not applicable 2026-12-06T10:00:00Z (SunPCSC has no AES/CTR/NoPadding)")
    in_use = Verdict(mode="CTR", status=Status.IN_USE, reason="C2 compiled CounterMode::implCrypt")
    assert _with_guard(in_use, guard) == in_use
