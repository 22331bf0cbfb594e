"""AArch64: the ARMv8 Crypto Extensions, set with OPENSSL_armcap and read back from CPUINFO. The
variable is the whole capability word, not a mask (crypto/armcap.c): switching AES off means giving
every other capability, built from the kernel's features as OpenSSL's getauxval does."""
from __future__ import annotations

import re

from jvmbridge.platforms.base import QEMU_USER, Platform
from jvmbridge.platforms.cpuinfo import cpuinfo_fields

# /proc/cpuinfo "Features" -> what it enables, in report order.
AES_FEATURES = {
    "aes": "AESE/AESD round instructions (ARMv8 Crypto Extensions)",
    "pmull": "polynomial multiply, for GCM's GHASH",
    "asimd": "Advanced SIMD (NEON)",
    "sha2": "SHA-256 instructions",
    "sha512": "SHA-512 instructions",
    "sve": "scalable vectors",
    "sve2": "scalable vectors 2",
}
# OpenSSL's capability bits (crypto/arm_arch.h) and the kernel features that set them.
NEON, AES, SHA1, SHA256, PMULL, SHA512, CPUID = 1 << 0, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7
_BITS = {"asimd": NEON, "aes": AES, "sha1": SHA1, "sha2": SHA256, "pmull": PMULL, "sha512": SHA512, "cpuid": CPUID}
# (implementer, part) -> core, from Linux's asm/cputype.h; the clouds' names beside.
CORES = {
    (0x41, 0xD05): "Arm Cortex-A55", (0x41, 0xD08): "Arm Cortex-A72 (AWS Graviton)",
    (0x41, 0xD0B): "Arm Cortex-A76", (0x41, 0xD0C): "Arm Neoverse N1 (AWS Graviton2, Ampere Altra)",
    (0x41, 0xD40): "Arm Neoverse V1 (AWS Graviton3)", (0x41, 0xD49): "Arm Neoverse N2",
    (0x41, 0xD4F): "Arm Neoverse V2 (AWS Graviton4)", (0xC0, 0xAC3): "AmpereOne",
}
_CPUINFO = re.compile(r"OPENSSL_armcap=(0x[0-9a-fA-F]+)")


def armcap_without_aes(features: list[str] | set[str]) -> int:
    """The capability word OpenSSL would detect from these kernel features, less AES and PMULL."""
    word = 0
    for feature, bit in _BITS.items():
        if feature in features:
            word |= bit
    return word & ~(AES | PMULL)


def armcap(cpuinfo: str) -> int:
    """The capability word OpenSSL runs with, from its "CPUINFO: OPENSSL_armcap=0x..." line."""
    match = _CPUINFO.search(cpuinfo)
    if not match:
        raise ValueError("no OPENSSL_armcap in OpenSSL's CPUINFO")
    return int(match[1], 16)


class AArch64(Platform):
    name = "aarch64"
    machines = ("aarch64", "arm64")
    accelerator = "ARMv8 Crypto Extensions"
    features_key = "Features"
    aes_features = AES_FEATURES
    openssl_variable = "OPENSSL_armcap"
    accp_classifier = "linux-aarch_64"

    def openssl_off_value(self) -> str:
        return hex(armcap_without_aes(cpuinfo_fields().get(self.features_key, "").split()))

    def openssl_value_off(self, value):
        try:
            return not int(value, 0) & AES  # the whole word: AES is on only if its bit is given
        except ValueError:
            return None

    def openssl_state(self, cpuinfo: str) -> tuple[bool, str]:
        word = armcap(cpuinfo)
        in_use = bool(word & AES)
        return in_use, f"ARMv8 AES {'used' if in_use else 'unused'}, armcap={word:#x}"

    # The aarch64 CTR stub (GCM too): JDK 11 and 17 force it off; JDK 18 added it on (JDK-8271567);
    # the 11u/17u backports left it off until JDK-8297656 (December 2022).
    def off_by_default(self, name: str) -> str:
        if name != "UseAESCTRIntrinsics":
            return super().off_by_default(name)
        return ("off by default in this update (11u and 17u carried the aarch64 CTR/GCM stub of JDK-8271567 "
                "off until JDK-8297656; JDK 18+ has it on): add -XX:+UnlockDiagnosticVMOptions -XX:+UseAESCTRIntrinsics")

    def no_stub(self, name: str) -> str:
        if name != "UseAESCTRIntrinsics":
            return super().no_stub(name)
        return ("this JDK has no CTR intrinsic on aarch64; JDK 18+ has it on, and 11u/17u updates since the "
                "JDK-8271567 backport (late 2021) have it")

    def emulation(self, fields: dict[str, str]) -> str | None:
        # qemu-user passes the host's /proc/cpuinfo through: x86 text to an aarch64 process.
        if self.features_key not in fields and ("vendor_id" in fields or "flags" in fields):
            return f"{QEMU_USER} (an aarch64 process on an x86 host: /proc/cpuinfo is the host's)"
        return super().emulation(fields)

    def model(self, fields: dict[str, str]) -> str | None:
        try:
            core = (int(fields["CPU implementer"], 16), int(fields["CPU part"], 16))
        except (KeyError, ValueError):
            return None
        return CORES.get(core, f"implementer {core[0]:#x} part {core[1]:#x}")
