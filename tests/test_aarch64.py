"""AArch64: the platform's names, features and OpenSSL switch, against a real aarch64 /proc/cpuinfo
text and real arm64 binaries (Debian bookworm's openssl and OpenJDK 17) under qemu-user. Speeds
under emulation mean nothing, so nothing here is timed."""
from __future__ import annotations

import pytest

import json
from pathlib import Path

from helpers import DATA, REPO, run_arm64, run_cli
from jvmbridge.cpu import cpu_info, cpuinfo_fields
from jvmbridge.jvm.printflags import parse
from jvmbridge.platforms import current
from jvmbridge.platforms.aarch64 import AES, CPUID, NEON, PMULL, SHA1, SHA256, AArch64, armcap, armcap_without_aes

# A Cortex-A55's first block, as published in
# https://marcin.juszkiewicz.com.pl/2022/11/08/from-the-diary-of-aarch64-porter-arm-cpu-features-table/
CORTEX_A55 = DATA / "cpuinfo-aarch64-cortex-a55.txt"
JAVA = "usr/lib/jvm/java-17-openjdk-arm64/bin/java"


@pytest.mark.fast
def test_an_aarch64_cpuinfo_names_its_core_and_crypto_features():
    assert cpu_info(CORTEX_A55, AArch64()) == {"model": "Arm Cortex-A55", "features": ["aes", "pmull", "asimd", "sha2"],
                                               "emulation": None, "vm_hides": []}


@pytest.mark.fast
def test_the_machine_picks_the_platform_and_its_names(monkeypatch):
    import jvmbridge.platforms

    for machine, name, off in (("aarch64", "aarch64", "ARMv8 Crypto Extensions off"), ("x86_64", "x86_64", "AES-NI off"),
                               ("riscv64", "riscv64", "CPU AES instructions off")):
        monkeypatch.setattr(jvmbridge.platforms._host, "machine", lambda machine=machine: machine)
        assert (current().name, current().setting(False)) == (name, off)
    # A platform jvmbridge does not know has no switch to offer: its OpenSSL state reads as unknown.
    assert current().openssl_environment({"A": "1"}, accelerated=False) == {"A": "1"}


@pytest.mark.fast
def test_the_off_word_keeps_every_capability_but_aes_and_pmull():
    features = cpuinfo_fields(CORTEX_A55)["Features"].split()
    assert armcap_without_aes(features) == NEON | SHA1 | SHA256 | CPUID


def test_real_arm64_openssl_takes_the_whole_word_and_reports_it(arm64_rootfs):
    here = AArch64()
    default = run_arm64(arm64_rootfs, "usr/bin/openssl", "version", "-c")
    assert default.returncode == 0, default.stderr
    in_use, shown = here.openssl_state(default.stdout)
    assert in_use and armcap(default.stdout) & (AES | PMULL) == AES | PMULL, shown
    # OPENSSL_armcap replaces the detected word (it is not a mask): all but AES and PMULL kept.
    off_word = armcap(default.stdout) & ~(AES | PMULL)
    masked = run_arm64(arm64_rootfs, "usr/bin/openssl", "version", "-c", env={"OPENSSL_armcap": hex(off_word)})
    assert here.openssl_state(masked.stdout) == (False, f"ARMv8 AES unused, armcap={off_word:#x}")
    assert f"env:{off_word:#x}" in masked.stdout


def test_real_arm64_jdk_17_keeps_ctr_and_ghash_intrinsics_on_without_use_aes(arm64_rootfs, tmp_path):
    listing = run_arm64(arm64_rootfs, JAVA, "-XX:+UnlockDiagnosticVMOptions", "-XX:+PrintFlagsFinal", "-XX:-UseAES",
                        "-version")
    assert listing.returncode == 0, listing.stderr
    assert 'openjdk version "17.' in listing.stderr
    flags = parse(listing.stdout, source="arm64").flags
    assert (flags["UseAES"].value, flags["UseAESIntrinsics"].value) == ("false", "false")
    # What the issue saw: on aarch64, -UseAES leaves the CTR and GHASH intrinsics running.
    assert (flags["UseAESCTRIntrinsics"].value, flags["UseGHASHIntrinsics"].value) == ("true", "true")
    saved = tmp_path / "arm64-flags.txt"
    saved.write_text(listing.stdout)
    done = run_cli("flags", "--from", str(saved), "--format", "json")
    assert done.returncode == 0, done.stderr
    shown = {row["name"]: row for row in json.loads(done.stdout)["flags"]}
    assert shown["UseAES"]["value"] == "false" and shown["UseAESCTRIntrinsics"]["value"] == "true"


@pytest.mark.fast
def test_emulation_is_told_from_cpuinfo_and_said_once_in_the_report():
    x86_host = cpuinfo_fields(Path("/proc/cpuinfo"))  # what an aarch64 process under qemu-user reads
    assert AArch64().emulation(x86_host).startswith("qemu-user")
    assert AArch64().emulation(cpuinfo_fields(CORTEX_A55)) is None
    assert current().emulation({"model name": "QEMU Virtual CPU version 2.5+", "flags": "fpu"}).startswith("QEMU's")


@pytest.mark.fast
def test_the_accp_jar_is_chosen_per_architecture_in_gradle_and_the_platforms_alike():
    from jvmbridge.platforms.x86_64 import X86_64

    gradle = (REPO / "build.gradle").read_text()
    for platform in (AArch64(), X86_64()):
        assert f"'{platform.accp_classifier}'" in gradle
