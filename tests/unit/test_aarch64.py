"""AArch64: the platform's names, features and OpenSSL switch, against a real aarch64 /proc/cpuinfo
text and real arm64 binaries (Debian bookworm's openssl and OpenJDK 17) under qemu-user. Speeds
under emulation mean nothing, so nothing here is timed.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_aarch64.py."""
from __future__ import annotations

from pathlib import Path

from helpers import DATA, REPO

from jvmbridge.host.cpu import cpu_info, cpuinfo_fields
from jvmbridge.platforms import current
from jvmbridge.platforms.aarch64 import CPUID, NEON, SHA1, SHA256, AArch64, armcap_without_aes

# A Cortex-A55's first block, as published in
# https://marcin.juszkiewicz.com.pl/2022/11/08/from-the-diary-of-aarch64-porter-arm-cpu-features-table/
CORTEX_A55 = DATA / "cpuinfo-aarch64-cortex-a55.txt"


def test_an_aarch64_cpuinfo_names_its_core_and_crypto_features():
    assert cpu_info(CORTEX_A55, AArch64()) == {"model": "Arm Cortex-A55", "features": ["aes", "pmull", "asimd", "sha2"],
                                               "emulation": None, "vm_hides": []}


def test_the_machine_picks_the_platform_and_its_names(monkeypatch):
    import jvmbridge.platforms

    for machine, name, off in (("aarch64", "aarch64", "ARMv8 Crypto Extensions off"), ("x86_64", "x86_64", "AES-NI off"),
                               ("riscv64", "riscv64", "CPU AES instructions off")):
        monkeypatch.setattr(jvmbridge.platforms._host, "machine", lambda machine=machine: machine)
        assert (current().name, current().setting(False)) == (name, off)
    # A platform jvmbridge does not know has no switch to offer: its OpenSSL state reads as unknown.
    assert current().openssl_environment({"A": "1"}, accelerated=False) == {"A": "1"}


def test_the_off_word_keeps_every_capability_but_aes_and_pmull():
    features = cpuinfo_fields(CORTEX_A55)["Features"].split()
    assert armcap_without_aes(features) == NEON | SHA1 | SHA256 | CPUID


def test_emulation_is_told_from_cpuinfo_and_said_once_in_the_report():
    x86_host = cpuinfo_fields(Path("/proc/cpuinfo"))  # what an aarch64 process under qemu-user reads
    assert AArch64().emulation(x86_host).startswith("qemu-user")
    assert AArch64().emulation(cpuinfo_fields(CORTEX_A55)) is None
    assert current().emulation({"model name": "QEMU Virtual CPU version 2.5+", "flags": "fpu"}).startswith("QEMU's")


def test_the_accp_jar_is_chosen_per_architecture_in_gradle_and_the_platforms_alike():
    from jvmbridge.platforms.x86_64 import X86_64

    gradle = (REPO / "build.gradle").read_text()
    for platform in (AArch64(), X86_64()):
        assert f"'{platform.accp_classifier}'" in gradle
