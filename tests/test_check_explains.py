"""`check` explains what holds an intrinsic off, and tries a fix on the JVM before offering it.

The x86 cases run the real JVM with a lowered UseSSE/UseAVX (HotSpot turns the AES intrinsics off
without a word); the fix probe runs the real JVM with the option it would offer."""
from __future__ import annotations


import pytest

from helpers import DATA, check_json, cpu_has_aes, run_cli, verdicts
from jvmbridge.intrinsics.modes import MODES
from jvmbridge.check.tryfix import tried
from jvmbridge.intrinsics.verdict import Status, decide
from jvmbridge.cpu import cpu_info
from jvmbridge.jvm.discovery import resolve_java
from jvmbridge.jvm.printflags import parse
from jvmbridge.platforms import current
from jvmbridge.platforms.aarch64 import AArch64

x86_with_aes = pytest.mark.skipif(current().name != "x86_64" or not cpu_has_aes(), reason="needs an x86 CPU with AES-NI")


@x86_with_aes
def test_a_lowered_use_sse_is_named_as_the_cause_and_the_option_to_remove():
    done, document = check_json("--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseSSE=2")
    assert done.returncode == 1
    found = verdicts(document["jdks"][0])
    assert {v["status"] for v in found.values()} == {Status.DISABLED}
    assert found["CBC"]["reason"] == "UseAESIntrinsics=false [UseSSE=2, command line; it needs 3]"
    assert "UseAESCTRIntrinsics=false [UseSSE=2, command line; it needs 4]" in found["GCM"]["reason"]
    assert {v["fix"] for v in found.values()} == {"remove -XX:UseSSE=2 from the JVM's command line"}
    # Said once for the three modes, not three times.
    table = run_cli("check", "-q", "--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseSSE=2").stdout
    assert table.count("remove -XX:UseSSE=2") == 1, table


@x86_with_aes
def test_use_sse_3_leaves_cbc_on_and_ctr_off():
    done, document = check_json("--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseSSE=3", "--mode", "cbc",
                                "--mode", "ctr")
    found = verdicts(document["jdks"][0])
    assert found["CBC"]["status"] == Status.ACTIVE
    assert (found["CTR"]["status"], found["CTR"]["reason"]) == (
        Status.DISABLED, "UseAESCTRIntrinsics=false [UseSSE=3, command line; it needs 4]")


@pytest.mark.skipif(not {"avx512f", "vaes"} <= set(open("/proc/cpuinfo").read().split()),
                    reason="needs a CPU with AVX-512 and VAES")
def test_use_avx_below_3_is_active_but_says_the_widest_stubs_stay_unused():
    done, document = check_json("--no-verify", "--mode-time", "5", "--jvm-arg=-XX:UseAVX=2", "--mode", "ctr")
    ctr = verdicts(document["jdks"][0])["CTR"]
    assert ctr["status"] == Status.ACTIVE
    assert ctr["reason"].endswith("; UseAVX=2 [command line]: this CPU's AVX-512/VAES stubs stay unused")
    assert ctr["fix"] == "remove -XX:UseAVX=2 from the JVM's command line"


def _ctr_off_by_default():
    return parse("bool UseAES = true {product} {default}\n"
                 "bool UseAESCTRIntrinsics = false {diagnostic} {default}\n")


@x86_with_aes
def test_the_fix_for_a_flag_off_by_default_is_tried_on_the_real_jvm():
    # As an older aarch64 update reports CTR; this JVM has the stub, so asking for it takes.
    flags = _ctr_off_by_default()
    verdict = decide(MODES["ctr"], 17, ["aes"], flags, None)
    assert verdict.status == Status.DISABLED
    confirmed = tried(verdict, MODES["ctr"], resolve_java("java"), (), flags)
    assert confirmed.fix == (f"{verdict.fix} (tried: with it this JVM reports UseAESCTRIntrinsics=true)")


@x86_with_aes
def test_a_fix_the_jvm_refuses_is_replaced_by_what_the_jvm_said():
    # Under UseSSE=3 HotSpot keeps CTR off even when asked, and says why.
    flags = _ctr_off_by_default()
    verdict = decide(MODES["ctr"], 17, ["aes"], flags, None)
    refused = tried(verdict, MODES["ctr"], resolve_java("java"), ("-XX:UseSSE=3",), flags)
    assert refused.fix.startswith("-XX:+UnlockDiagnosticVMOptions -XX:+UseAESCTRIntrinsics leaves "
                                  "UseAESCTRIntrinsics off in this JVM (it says: ")
    assert "X86 AES-CTR intrinsics require SSE4.1 instructions or higher" in refused.fix


@pytest.mark.fast
def test_aarch64_names_the_jdk_history_of_its_ctr_stub():
    here = AArch64()
    assert here.off_by_default("UseAESCTRIntrinsics").endswith(
        "add -XX:+UnlockDiagnosticVMOptions -XX:+UseAESCTRIntrinsics")
    assert "JDK-8297656" in here.off_by_default("UseAESCTRIntrinsics")
    assert here.no_stub("UseAESCTRIntrinsics").startswith("this JDK has no CTR intrinsic on aarch64; JDK 18+")
    assert here.off_by_default("UseGHASHIntrinsics") == (
        "off by default in this JDK: add -XX:+UnlockDiagnosticVMOptions -XX:+UseGHASHIntrinsics")


# Graviton2 (c6g) and Graviton3 (c7g) feature lines and parts as published in
# https://github.com/andikaseptiadi/local-code-model/blob/main/GRAVITON_VERIFICATION.md
@pytest.mark.fast
@pytest.mark.parametrize("text, model, features", [
    ("cpuinfo-aarch64-graviton2.txt", "Arm Neoverse N1 (AWS Graviton2, Ampere Altra)", ["aes", "pmull", "asimd", "sha2"]),
    ("cpuinfo-aarch64-graviton3.txt", "Arm Neoverse V1 (AWS Graviton3)",
     ["aes", "pmull", "asimd", "sha2", "sha512", "sve"]),
])
def test_graviton_cpuinfo_names_the_core_and_its_crypto_features(text, model, features):
    assert cpu_info(DATA / text, AArch64()) == {"model": model, "features": features, "emulation": None, "vm_hides": []}


@pytest.mark.fast
def test_an_x86_text_read_by_an_aarch64_process_leaves_the_features_unknown(tmp_path):
    host = tmp_path / "cpuinfo"
    host.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu aes avx\n")
    cpu = cpu_info(host, AArch64())
    assert cpu["features"] is None and cpu["emulation"].startswith("qemu-user")
    # Unknown is not absent: the verdict is left to the flags (and the JIT), not "unsupported".
    flags = parse("bool UseAES = true {product} {default}\nbool UseAESCTRIntrinsics = true {diagnostic} {default}\n")
    assert decide(MODES["ctr"], 21, None, flags, None).status != Status.UNSUPPORTED
    assert decide(MODES["ctr"], 21, [], flags, None).status == Status.UNSUPPORTED


@pytest.mark.fast
def test_a_vm_cpu_model_that_passes_aes_but_hides_the_wider_features_is_named(tmp_path):
    from jvmbridge.platforms.x86_64 import X86_64
    from jvmbridge.render.check import render_table

    # A guest CPU model such as QEMU's "Westmere": AES-NI and PCLMULQDQ, none of the AVX-512 ones.
    guest = tmp_path / "cpuinfo"
    guest.write_text("processor\t: 0\nmodel name\t: Westmere E56xx/L56xx/X56xx (Nehalem-C)\n"
                     "flags\t\t: fpu sse2 ssse3 sse4_1 sse4_2 pclmulqdq aes hypervisor\n")
    cpu = cpu_info(guest, X86_64())
    assert cpu["vm_hides"] == ["vaes", "vpclmulqdq", "avx512f"]
    document = {"host": "guest", "cpu": {"model": cpu["model"], "emulation": None, "vm_hides": cpu["vm_hides"],
                                         "features": {"aes": {"present": True, "enables": "AES-NI"}}},
                "jdks": [], "live_jvms": [], "exit_code": 0}
    assert "VM       its CPU model passes on aes but not vaes, vpclmulqdq, avx512f" in render_table(document)
    # Bare metal (no hypervisor flag) hides nothing.
    guest.write_text("processor\t: 0\nflags\t\t: fpu sse2 pclmulqdq aes\n")
    assert cpu_info(guest, X86_64())["vm_hides"] == []
