"""What every engine computes (Operation), how it is sampled (Workload), the ciphers and sizes."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation

from jvmbridge.forks.protocol import LoopRequest
from jvmbridge.sampling.policy import Sampling, check_iterations

KEY_BITS = (128, 192, 256)
# Only CBC pads (PKCS#7 = PKCS5Padding).
TRANSFORMATIONS = {"cbc": "AES/CBC/PKCS5Padding", "ctr": "AES/CTR/NoPadding",
                   "gcm": "AES/GCM/NoPadding", "cfb": "AES/CFB/NoPadding"}
# "message": a doFinal per message with padding (AESNITester); "stream": updates never finished
# (`openssl speed -evp`). Their gap is set-up cost.
SHAPES = ("message", "stream")
DIRECTIONS = ("encrypt", "decrypt")
AESNITESTER_MESSAGE_BYTES = 38
# `openssl speed`'s default sizes; the sweep runs them beside AESNITester's 38 bytes.
SPEED_SIZES = (16, 64, 256, 1024, 8192, 16384)
SWEEP_SIZES = tuple(sorted((AESNITESTER_MESSAGE_BYTES, *SPEED_SIZES)))
# Either side of 8 KiB and 16 KiB, and a 1 MiB one-shot: where JDKs have changed code path.
CLIFF_SIZES = tuple(sorted({*SWEEP_SIZES, 8191, 8192, 16383, 16384, 1024 * 1024}))
_TEXT = b"The quick brown fox jumps over the lazy dog. "
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


def parse_count(value: str | int | float) -> int:
    """An iteration count written as 1e8, 100000000, 1_000_000 or 2.5e6; integral values only."""
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a number (examples: 1e8, 100000000, 1_000_000)") from None
    if not number.is_finite():
        raise ValueError(f"{value!r} is not a whole number")
    check_iterations(number)  # first: 1e999999999 overflows Decimal's rounding, and would take int() minutes
    if number != number.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number")
    return int(number)


@dataclass(frozen=True)
class Operation:
    """One cipher and direction on messages of one size, in one call shape."""
    key_bits: int = 256
    mode: str = "cbc"
    direction: str = "encrypt"  # decrypt: each iteration decrypts the plaintext's ciphertext
    message_bytes: int = AESNITESTER_MESSAGE_BYTES
    shape: str = "message"

    def __post_init__(self):
        if self.mode not in TRANSFORMATIONS:
            raise ValueError(f"mode must be one of {', '.join(TRANSFORMATIONS)}, not {self.mode!r}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, not {self.direction!r}")
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, not {self.shape!r}")
        if self.key_bits not in KEY_BITS:
            raise ValueError(f"key size must be one of {', '.join(map(str, KEY_BITS))} bits, not {self.key_bits}")
        if not 0 <= self.message_bytes <= MAX_MESSAGE_BYTES:
            raise ValueError(f"message size must be between 0 and {MAX_MESSAGE_BYTES} bytes, not {self.message_bytes}")

    @property
    def key(self) -> bytes:
        # Fixed rather than KeyGenerator's: JDK 17 defaults to 128-bit keys, JDK 25 to 256.
        return hashlib.sha256(b"jvmbridge key").digest()[: self.key_bits // 8]

    @property
    def iv(self) -> bytes:
        # GCM's standard nonce is 96 bits; the other modes take a 128-bit IV or counter block.
        return hashlib.sha256(b"jvmbridge iv").digest()[: 12 if self.mode == "gcm" else 16]

    @property
    def plaintext(self) -> bytes:
        return (_TEXT * (self.message_bytes // len(_TEXT) + 1))[: self.message_bytes]

    @property
    def transformation(self) -> str:
        """The JCE name of the same operation."""
        return TRANSFORMATIONS[self.mode]

    @property
    def cipher_name(self) -> str:
        """The openssl-style name, e.g. aes-256-cbc."""
        return f"aes-{self.key_bits}-{self.mode}"

    def loop_input(self) -> bytes:
        """What each native loop iteration processes (a GCM stream's ciphertext without the tag)."""
        if self.direction == "encrypt":
            return self.plaintext
        from jvmbridge.reference import encrypt_message  # pyca: loaded only where decryption is measured

        ciphertext = encrypt_message(self.key, self.iv, self.plaintext, self.mode)
        return ciphertext[:-16] if self.mode == "gcm" and self.shape == "stream" else ciphertext

    def as_dict(self) -> dict:
        padding = "PKCS#7 (PKCS5Padding)" if self.mode == "cbc" else "no padding"
        return {**asdict(self), "cipher": self.cipher_name, "padding": padding}


@dataclass(frozen=True)
class Workload:
    """One operation, sampled one way: what each configuration of a comparison measures."""
    operation: Operation = Operation()
    sampling: Sampling = Sampling()

    def loop_request(self) -> LoopRequest:
        """The worker's timed-loop request: inputs, duration and width."""
        o, s = self.operation, self.sampling
        return LoopRequest(key=o.key.hex(), iv=o.iv.hex(), plaintext=o.plaintext.hex(), shape=o.shape,
                           direction=o.direction, iterations=s.fork_iterations, rounds=s.rounds,
                           round_seconds=s.round_seconds, threads=s.threads)

    def seconds_at_most(self, warmup_max_seconds: float) -> float:
        """A generous bound on one fork's time, past which the child hangs: warm-up limit, rounds at 3x
        plan (per message 20 µs + 50 ns/byte, slower than any AES seen, where rounds are unsized), 5 s."""
        s = self.sampling
        per_message = 20e-6 + 50e-9 * self.operation.message_bytes
        timed = s.fork_iterations * per_message if s.fork_iterations else s.rounds * max(s.round_seconds, per_message)
        return warmup_max_seconds + 3 * timed + 5

    def row_fields(self) -> dict:
        """What a result row says was measured."""
        o = self.operation
        return {"cipher": o.cipher_name, "direction": o.direction, "shape": o.shape,
                "message_bytes": o.message_bytes, "threads": self.sampling.threads}

    def as_dict(self) -> dict:
        """Flat, as run metadata records it."""
        return {**self.operation.as_dict(), **self.sampling.as_dict()}


def parse_cipher(name: str) -> tuple[int, str]:
    """(key bits, mode) of an openssl-style name such as aes-128-gcm."""
    parts = name.lower().split("-")
    if len(parts) != 3 or parts[0] != "aes" or not parts[1].isdigit() or int(parts[1]) not in KEY_BITS \
            or parts[2] not in TRANSFORMATIONS:
        raise ValueError(f"{name!r} is not a cipher jvmbridge runs: aes-{{128,192,256}}-{{{','.join(TRANSFORMATIONS)}}}")
    return int(parts[1]), parts[2]


def parse_sizes(value: str) -> list[int]:
    """Message sizes: 38, a list (16,64,256), "sweep" or "cliffs" (sweep plus known cliffs' neighbours)."""
    named = {"sweep": SWEEP_SIZES, "cliffs": CLIFF_SIZES}.get(value.strip().lower())
    if named:
        return list(named)
    parts = [part.strip() for part in value.split(",")]
    if "" in parts and any(parts):
        raise ValueError(f"{value!r} has an empty size between commas")
    try:
        sizes = [int(part) for part in parts if part]
    except ValueError:
        raise ValueError(f"{value!r} is not a comma-separated list of byte counts, nor \"sweep\" or \"cliffs\"") from None
    if not sizes:
        raise ValueError("give at least one size")
    return list(dict.fromkeys(sizes))


def combinations(ciphers: Iterable[tuple[int, str]], directions: Iterable[str], sizes: Iterable[int],
                 shapes: Iterable[str], sampling: Sampling) -> list[Workload]:
    """One workload per (key bits, mode), direction, size and shape, in report order."""
    return [Workload(operation=Operation(key_bits=bits, mode=mode, direction=direction, message_bytes=size,
                                         shape=shape), sampling=sampling)
            for bits, mode in dict.fromkeys(ciphers) for direction in dict.fromkeys(directions)
            for size in dict.fromkeys(sizes) for shape in dict.fromkeys(shapes)]
