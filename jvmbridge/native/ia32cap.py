"""Switching OpenSSL's AES-NI off with OPENSSL_ia32cap, and proving from CPUINFO that it took.

OpenSSL reads OPENSSL_ia32cap once, when the library loads, so each setting needs its own process.
"""
from __future__ import annotations

import re

# Clear AES-NI (word 0 bit 57) and PCLMULQDQ (bit 33), then VAES and VPCLMULQDQ (word 1 bits 41,
# 42). Every further word is given as ~0 (unchanged): a word left out is zeroed, which would also
# switch off AVX2/AVX-512 and skew the figure. OpenSSL 3.0 reads two words and ignores the rest;
# OpenSSL 4 reads five.
AESNI_OFF_MASK = "~0x200000200000000:~0x60000000000:~0:~0:~0"
AESNI_BIT = 57
PCLMULQDQ_BIT = 33

_CPUINFO = re.compile(r"OPENSSL_ia32cap=((?:0x[0-9a-fA-F]+)(?::0x[0-9a-fA-F]+)*)")


def environment(base: dict[str, str], aesni: bool) -> dict[str, str]:
    """``base`` with the mask set, or with OPENSSL_ia32cap removed (an empty value disables nearly
    every capability rather than none)."""
    env = {k: v for k, v in base.items() if k != "OPENSSL_ia32cap"}
    if not aesni:
        env["OPENSSL_ia32cap"] = AESNI_OFF_MASK
    return env


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


def describe(cpuinfo: str) -> tuple[bool, str]:
    """Whether the CPUINFO line shows AES-NI in use, and that state as the report shows it."""
    in_use = aesni_in_use(cpuinfo)
    return in_use, f"AES-NI {'used' if in_use else 'unused'}, ia32cap={cpuinfo_value(cpuinfo)}"
