"""x86-64: AES-NI and its vector forms; OpenSSL's AES-NI is switched off with OPENSSL_ia32cap (read
once at load: a process per setting) and read back from its CPUINFO line."""
from __future__ import annotations

import re

from jvmbridge.platforms.base import Platform
from jvmbridge.wholenumber import whole_number

# Feature flag -> what it enables, in the order the report lists them.
AES_FEATURES = {
    "aes": "AES-NI round instructions (AESENC/AESDEC)",
    "pclmulqdq": "carry-less multiply, for GCM's GHASH",
    "avx": "256-bit vector registers",
    "avx2": "256-bit integer vectors",
    "vaes": "vector AES: several blocks per instruction",
    "vpclmulqdq": "vector carry-less multiply, wide GHASH",
    "avx512f": "512-bit vectors (with VAES: 4 blocks per instruction)",
}

# Clear AES-NI (word 0 bit 57), PCLMULQDQ (bit 33), VAES and VPCLMULQDQ (word 1 bits 41, 42); later
# words ~0, as an omitted word is zeroed, which would also switch off AVX2/AVX-512.
AESNI_OFF_MASK = "~0x200000200000000:~0x60000000000:~0:~0:~0"
AESNI_BIT = 57
PCLMULQDQ_BIT = 33

_CPUINFO = re.compile(r"OPENSSL_ia32cap=((?:0x[0-9a-fA-F]+)(?::0x[0-9a-fA-F]+)*)")


def capability_words(cpuinfo: str) -> list[int]:
    """The capability words from a "CPUINFO: OPENSSL_ia32cap=0x…:0x…" line."""
    match = _CPUINFO.search(cpuinfo)
    if not match:
        raise ValueError(f"no OPENSSL_ia32cap in {cpuinfo!r}")
    return [int(word, 16) for word in match[1].split(":")]


def aesni_in_use(cpuinfo: str) -> bool:
    return bool(capability_words(cpuinfo)[0] >> AESNI_BIT & 1)


def cpuinfo_value(cpuinfo: str) -> str:
    """Just the "0x…:0x…" part, for the report."""
    return ":".join(f"0x{word:x}" for word in capability_words(cpuinfo))


# The UseSSE level HotSpot's x86 AES stubs need (vm_version_x86.cpp): lower turns them off silently.
SSE_NEEDED = {"UseAESIntrinsics": 3, "UseGHASHIntrinsics": 3, "UseAESCTRIntrinsics": 4}
# UseAVX=3 for the AVX-512/VAES stubs.
AVX512_STUBS = ("avx512f", "vaes")


class X86_64(Platform):
    name = "x86_64"
    machines = ("x86_64", "amd64")
    accelerator = "AES-NI"
    aes_features = AES_FEATURES
    openssl_variable = "OPENSSL_ia32cap"
    accp_classifier = "linux-x86_64"
    # Without UseAESIntrinsics HotSpot turns CTR off too (aarch64 does not).
    implied_off = {"UseAESIntrinsics": ("UseAES",), "UseAESCTRIntrinsics": ("UseAES", "UseAESIntrinsics")}

    def openssl_off_value(self) -> str:
        return AESNI_OFF_MASK

    def vm_hides(self, fields):
        listed = fields.get(self.features_key, "").split()
        if "hypervisor" not in listed or "aes" not in listed:
            return []
        return [f for f in ("pclmulqdq", "vaes", "vpclmulqdq", "avx512f") if f not in listed]

    def held_off(self, flags):
        sse = flags.get("UseSSE")
        level = None if sse is None else whole_number(sse.value)
        if sse is None or level is None:
            return {}
        return {name: (sse, need) for name, need in SSE_NEEDED.items() if level < need}

    def slowed(self, flags, features):
        avx = flags.get("UseAVX")
        has_stubs = features is not None and all(f in features for f in AVX512_STUBS)
        level = None if avx is None else whole_number(avx.value)
        return avx if level is not None and level < 3 and has_stubs else None

    def openssl_value_off(self, value):
        # The first word is ANDed after "~", else replaced (crypto/cpuid.c).
        first = value.split(":")[0]
        try:
            bits = int(first.lstrip("~"), 0) if first else None
        except ValueError:
            return None
        if bits is None:
            return False
        return bool(bits >> AESNI_BIT & 1) if first.startswith("~") else not bits >> AESNI_BIT & 1

    def openssl_state(self, cpuinfo: str) -> tuple[bool, str]:
        in_use = aesni_in_use(cpuinfo)
        return in_use, f"AES-NI {'used' if in_use else 'unused'}, ia32cap={cpuinfo_value(cpuinfo)}"
