"""What `verify` feeds the JVM: cases with inputs and OpenSSL's answers (pyca: an independent
implementation), in one length-prefixed file for Conformance.java."""
from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from jvmbridge.intrinsics.modes import Mode
from jvmbridge.reference import encrypt_message
from jvmbridge.trust.writer import create_private_file

PLAN_VERSION = 1  # must equal Conformance.PLAN_VERSION
KEY_BITS = (128, 192, 256)
DIRECTIONS = ("encrypt", "decrypt")
LARGE = 1024 * 1024 + 5


def sweep_sizes() -> list[int]:
    """Every size 0..1040, then k x 512 and k x 768 ± 1..17 (the x86 stubs' stride tails), 7680,
    8192, 16384, 64 KiB ± 1, and one large input."""
    sizes = set(range(1041))
    for stride in (512, 768):
        for k in range(2, 11):
            sizes.update(k * stride + offset for offset in range(-17, 18))
    sizes.update((7680, 8192, 16384, 65535, 65536, 65537, LARGE))
    return sorted(sizes)


def quick_sizes() -> list[int]:
    """A short pass for `check`: 0..80 and the stride edges around 512, 768 and 1536."""
    return sorted(set(range(81)) | {stride + offset for stride in (512, 768, 1536) for offset in (-17, -1, 0, 1, 17)})


@dataclass(frozen=True)
class Case:
    id: int
    key_bits: int
    direction: str
    size: int  # plaintext bytes, in either direction

    def describe(self) -> str:
        return f"AES-{self.key_bits} {self.direction} of {self.size} bytes"


@dataclass(frozen=True)
class Inputs:
    key: bytes
    iv: bytes
    aad: bytes
    input: bytes
    expected: bytes


def cases(sizes: Iterable[int], key_bits: Iterable[int] = KEY_BITS,
          directions: Iterable[str] = DIRECTIONS) -> list[Case]:
    """Grouped by key size and direction, smallest first (a pass's first divergence is its smallest)."""
    sizes = sorted(set(sizes))
    grouped = [(bits, direction, size) for bits in key_bits for direction in directions for size in sizes]
    return [Case(id=number, key_bits=bits, direction=direction, size=size)
            for number, (bits, direction, size) in enumerate(grouped)]


def inputs(mode: Mode, case: Case) -> Inputs:
    """The case's seeded key, IV, AAD and plaintext, and what OpenSSL makes of them."""
    rng = random.Random(f"{mode.key}:{case.key_bits}:{case.direction}:{case.size}")
    key = rng.randbytes(case.key_bits // 8)
    iv = rng.randbytes(12 if mode.key == "gcm" else 16)
    aad = rng.randbytes(case.size % 33) if mode.key == "gcm" else b""
    plaintext = rng.randbytes(case.size)
    ciphertext = encrypt_message(key, iv, plaintext, mode.key, aad)
    if case.direction == "encrypt":
        return Inputs(key=key, iv=iv, aad=aad, input=plaintext, expected=ciphertext)
    # OpenSSL's ciphertext: a wrong JVM is never blamed for an encryption it did not run.
    return Inputs(key=key, iv=iv, aad=aad, input=ciphertext, expected=plaintext)


def write_plan(path: Path, mode: Mode, planned: list[Case]) -> None:
    with os.fdopen(create_private_file(path), "wb") as out:
        out.write(struct.pack(">i", PLAN_VERSION))
        transformation = mode.transformation.encode()
        out.write(struct.pack(">H", len(transformation)) + transformation)
        out.write(struct.pack(">i", len(planned)))
        for case in planned:
            data = inputs(mode, case)
            out.write(struct.pack(">i", case.id))
            for field in (data.key, data.iv, data.aad):
                out.write(struct.pack(">i", len(field)) + field)
            out.write(struct.pack(">?", case.direction == "decrypt"))
            for field in (data.input, data.expected):
                out.write(struct.pack(">i", len(field)) + field)
