"""AArch64: the platform's names, features and OpenSSL switch, against a real aarch64 /proc/cpuinfo
text and real arm64 binaries (Debian bookworm's openssl and OpenJDK 17) under qemu-user. Speeds
under emulation mean nothing, so nothing here is timed.

Split by tier: here what needs a process; the rest is in tests/unit/test_aarch64.py."""
from __future__ import annotations

import json

from helpers import run_arm64, run_cli

from jvmbridge.jvm.printflags import parse
from jvmbridge.platforms.aarch64 import AES, PMULL, AArch64, armcap

JAVA = "usr/lib/jvm/java-17-openjdk-arm64/bin/java"


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
