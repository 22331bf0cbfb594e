"""The fast tier for verify: sizes, cases, inputs, known bugs, reduction and rendering (no JVM)."""
from __future__ import annotations

from jvmbridge.check.host import with_verification
from jvmbridge.intrinsics.jitlog import is_inlining_log
from jvmbridge.intrinsics.modes import MODES
from jvmbridge.intrinsics.verdict import Status, Verdict
from jvmbridge.jvm.messages import crash_report, crash_summary
from jvmbridge.reference import decrypt_message
from jvmbridge.render.verify import render_table as render_verify
from jvmbridge.verify.attribute import Finding, findings
from jvmbridge.verify.known_bugs import KNOWN_BUGS, matching
from jvmbridge.verify.plan import LARGE, cases, inputs, quick_sizes, sweep_sizes
from jvmbridge.verify.sweep import Divergence, SweepOutcome

AVX512 = ["aes", "avx2", "vaes", "avx512f"]


def test_sweep_sizes_cover_every_small_size_and_the_stride_edges():
    sizes = sweep_sizes()
    assert sizes == sorted(set(sizes))
    assert set(range(1041)) <= set(sizes)
    assert {512 * 4 - 17, 512 * 4 + 17, 768 * 10 - 1, 7680, 8192, 16384, 65535, 65536, 65537, LARGE} <= set(sizes)
    assert max(sizes) == LARGE == 1024 * 1024 + 5
    assert set(range(81)) <= set(quick_sizes()) and max(quick_sizes()) < 2048


def test_cases_group_by_key_and_direction_smallest_first():
    planned = cases([16, 0, 5])
    assert [c.id for c in planned] == list(range(18))
    assert [(c.key_bits, c.direction, c.size) for c in planned[:4]] == [
        (128, "encrypt", 0), (128, "encrypt", 5), (128, "encrypt", 16), (128, "decrypt", 0)]


def test_inputs_are_repeatable_and_decryption_takes_openssls_ciphertext():
    for mode in ("cbc", "ctr", "gcm", "cfb", "ecb"):
        encrypt, decrypt = cases([33], key_bits=[192])
        first, again = inputs(MODES[mode], encrypt), inputs(MODES[mode], encrypt)
        assert first == again and len(first.key) == 24
        back = inputs(MODES[mode], decrypt)
        assert decrypt_message(back.key, back.iv, back.input, mode, back.aad) == back.expected
    assert len(inputs(MODES["gcm"], encrypt).aad) == 0 and len(inputs(MODES["gcm"], encrypt).iv) == 12


def test_jdk_8292158_matches_affected_versions_on_avx512_only():
    (bug,) = [b for b in KNOWN_BUGS if b.id == "JDK-8292158"]
    assert bug.affects("17.0.3") and bug.affects("11.0.17") and bug.affects("19.0.1")
    assert not bug.affects("17.0.6") and not bug.affects("17.0.15") and not bug.affects("21.0.2")
    assert matching("ctr", "UseAESCTRIntrinsics", "17.0.3", AVX512) is bug
    assert matching("ctr", "UseAESCTRIntrinsics", "17.0.3", ["aes", "avx2"]) is None
    assert matching("ctr", "UseAESCTRIntrinsics", "17.0.15", AVX512) is None
    assert matching("cbc", "UseAESIntrinsics", "17.0.3", AVX512) is None


def test_fixed_versions_nobody_confirmed_are_unknown_not_guessed():
    (gcm,) = [b for b in KNOWN_BUGS if b.id == "JDK-8371864"]
    assert gcm.affects("25.0.3") is None and "unknown" in gcm.describe()


def _divergence(case, pattern, index=3):
    return Divergence(case, pattern, pass_number=2, compiled=True, index=index, actual="aa", expected="bb",
                      actual_length=case.size)


def test_findings_keep_the_smallest_case_per_pattern():
    planned = {c.size: c for c in cases([5, 9, 40], key_bits=[128], directions=["encrypt"])}
    outcome = SweepOutcome(divergences=[_divergence(planned[40], "updates"), _divergence(planned[9], "updates"),
                                        _divergence(planned[40], "mixed")])
    found = {f.pattern: f for f in findings(MODES["ctr"], outcome)}
    assert found["updates"].case.size == 9 and found["mixed"].case.size == 40
    assert found["updates"].divergence.what() == "first differs at byte 3 (JVM aa, OpenSSL bb)"


def test_a_finding_blamed_on_a_diagnostic_flag_needs_the_unlock():
    (case,) = cases([5], key_bits=[128], directions=["encrypt"])
    finding = Finding("ctr", "updates", case, None, None, 1, reproduced=True, culprit="UseAESCTRIntrinsics")
    assert finding.workaround == "-XX:+UnlockDiagnosticVMOptions -XX:-UseAESCTRIntrinsics"
    assert Finding("ctr", "updates", case, None, None, 1, reproduced=True, culprit="UseAES").workaround == "-XX:-UseAES"
    assert "cause unknown" in Finding("ctr", "updates", case, None, None, 1, reproduced=False).attribution()


BANNER = """#
# A fatal error has been detected by the Java Runtime Environment:
#
#  SIGSEGV (0xb) at pc=0x00007f3c21159bdb, pid=4402, tid=4415
#
# JRE version: OpenJDK Runtime Environment Temurin-17.0.3+7 (17.0.3+7) (build 17.0.3+7)
# Problematic frame:
# V  [libjvm.so+0x559bdb]  ciObjectFactory::create_new_metadata(Metadata*)+0x2b
#
# No core dump will be written. Core dumps have been disabled.
#
# An error report file with more information is saved as:
# /tmp/jvmbridge-crashes/hs_err_pid4402.log
"""


def test_crash_banner_keeps_the_signal_and_the_frame():
    assert crash_summary(BANNER) == ["SIGSEGV (0xb) at pc=0x00007f3c21159bdb, pid=4402, tid=4415",
                                     "V  [libjvm.so+0x559bdb]  ciObjectFactory::create_new_metadata(Metadata*)+0x2b"]
    assert crash_report(BANNER) == "/tmp/jvmbridge-crashes/hs_err_pid4402.log"
    assert crash_summary("Error: Could not create the Java Virtual Machine.") == []


def _mode(findings_: list[dict]) -> dict:
    return {"mode": "CTR", "status": "WRONG" if findings_ else "correct", "error": None, "cases": 12, "groups": 6,
            "patterns": ["updates", "mixed"], "passes": 4, "compiled_passes": 3, "intrinsics_seen": [],
            "mode_intrinsics_seen": ["CounterMode::implCrypt"], "intrinsics_expected": "CounterMode::implCrypt",
            "proven_after_seconds": 1.0, "divergent_runs": 7, "seconds": 3.0, "findings": findings_,
            "intrinsic_off": None}


def _finding(pattern: str) -> dict:
    return {"pattern": pattern, "key_bits": 128, "direction": "encrypt", "size": 5, "groups": 6,
            "what": "first differs at byte 3 (JVM aa, OpenSSL bb)", "first_differing_byte": 3, "crash": None,
            "reproduced": True, "culprit_flag": "UseAESCTRIntrinsics",
            "workaround": "-XX:+UnlockDiagnosticVMOptions -XX:-UseAESCTRIntrinsics", "known_bug": "JDK-8292158",
            "known_bug_description": "JDK-8292158 (AES-CTR ...)",
            "attribution": "the intrinsic: right with -XX:+UnlockDiagnosticVMOptions -XX:-UseAESCTRIntrinsics"}


def test_a_cause_shared_by_every_pattern_is_printed_once_and_the_bug_once_anyway():
    document = {"jvmbridge_version": "0", "exit_code": 1, "cpu": {"model": "cpu", "features": AVX512},
                "sweep": {"reference": "OpenSSL", "sizes": 2, "smallest": 0, "largest": 5, "key_bits": [128],
                          "directions": ["encrypt"], "patterns": ["updates", "mixed"], "compiled_passes": 2,
                          "budget_seconds": 30},
                "jdks": [{"java_home": "/jdk", "version": "17.0.3", "options": [], "provider_class": "",
                          "modes": [_mode([_finding("updates"), _finding("mixed")])]}]}
    text = render_verify(document)
    assert text.count("JDK-8292158") == 1 and text.count("Workaround:") == 1 and text.count("Cause:") == 1
    document["jdks"][0]["modes"][0]["findings"][1]["attribution"] = "did not come back in a fresh JVM"
    text = render_verify(document)
    assert text.count("JDK-8292158") == 1 and text.count("cause:") == 2 and "Cause:" not in text
    assert "updates  AES-128 encrypt of 5 bytes" in text and "mixed    AES-128 encrypt of 5 bytes" in text
    assert text.rstrip().endswith("do not trust it as configured.")


def test_check_verdicts_carry_the_verification():
    active = Verdict("CTR", "active", "JIT used CounterMode::implCrypt (intrinsic) within 0.2 s")
    assert with_verification(active, _mode([])).status == Status.VERIFIED
    # Right bytes from code the JIT had not yet made intrinsic prove nothing about the intrinsic.
    uncompiled = with_verification(active, {**_mode([]), "status": "correct, intrinsic not compiled", "compiled_passes": 0})
    assert uncompiled.status == Status.ACTIVE and uncompiled.reason.endswith(
        "; verify's bytes were right, but no pass ran on the compiled CounterMode::implCrypt within its 3 s "
        "(`jvmbridge verify` runs longer)")
    wrong = with_verification(active, _mode([_finding("updates")]))
    assert wrong.status == Status.WRONG and "AES-128 encrypt of 5 bytes" in wrong.reason and "JDK-8292158" in wrong.reason


def test_the_inlining_log_is_told_from_the_jvms_own_complaints():
    # Seen in CI: C2 prints some decisions without the `[jit,inlining]` decorations, and one such
    # line came last on stderr, in place of the harness's "cannot load JCE provider" line.
    assert is_inlining_log("[0.512s][debug][jit,inlining]   @ 36   java.lang.String::length (11 bytes)")
    assert is_inlining_log("                               @ 88   jdk.internal.org.objectweb.asm.SymbolTable$Entry::<init> (17 bytes)   callee uses too much stack")
    assert not is_inlining_log("cannot load JCE provider no.such.Provider: java.lang.ClassNotFoundException: no.such.Provider")
    assert not is_inlining_log("Unrecognized VM option 'UseNoSuchThing'")
