"""`check` explains what holds an intrinsic off, and tries a fix on the JVM before offering it.

The x86 cases run the real JVM with a lowered UseSSE/UseAVX (HotSpot turns the AES intrinsics off
without a word); the fix probe runs the real JVM with the option it would offer.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_check_explains.py."""
from __future__ import annotations

import pytest
from helpers import DATA

from jvmbridge.host.cpu import cpu_info
from jvmbridge.intrinsics.modes import MODES
from jvmbridge.intrinsics.verdict import Status, decide
from jvmbridge.jvm.printflags import parse
from jvmbridge.platforms.aarch64 import AArch64


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
@pytest.mark.parametrize("text, model, features", [
    ("cpuinfo-aarch64-graviton2.txt", "Arm Neoverse N1 (AWS Graviton2, Ampere Altra)", ["aes", "pmull", "asimd", "sha2"]),
    ("cpuinfo-aarch64-graviton3.txt", "Arm Neoverse V1 (AWS Graviton3)",
     ["aes", "pmull", "asimd", "sha2", "sha512", "sve"]),
])
def test_graviton_cpuinfo_names_the_core_and_its_crypto_features(text, model, features):
    assert cpu_info(DATA / text, AArch64()) == {"model": model, "features": features, "emulation": None, "vm_hides": []}


def test_an_x86_text_read_by_an_aarch64_process_leaves_the_features_unknown(tmp_path):
    host = tmp_path / "cpuinfo"
    host.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu aes avx\n")
    cpu = cpu_info(host, AArch64())
    assert cpu["features"] is None and cpu["emulation"].startswith("qemu-user")
    # Unknown is not absent: the verdict is left to the flags (and the JIT), not "unsupported".
    flags = parse("bool UseAES = true {product} {default}\nbool UseAESCTRIntrinsics = true {diagnostic} {default}\n")
    assert decide(MODES["ctr"], 21, None, flags, None).status != Status.UNSUPPORTED
    assert decide(MODES["ctr"], 21, [], flags, None).status == Status.UNSUPPORTED


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
