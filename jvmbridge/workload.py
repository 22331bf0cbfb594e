"""What every engine computes (Operation: the same key, IV and plaintext, AESNITester's shape by
default) and how it is timed (Sampling)."""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation

from jvmbridge.forks.protocol import LoopRequest
from jvmbridge.stats.summary import CONFIDENCE, forks_needed

KEY_BITS = (128, 192, 256)
# Mode -> the JCE transformation of the same operation. Only CBC pads (PKCS#7 = PKCS5Padding).
TRANSFORMATIONS = {"cbc": "AES/CBC/PKCS5Padding", "ctr": "AES/CTR/NoPadding",
                   "gcm": "AES/GCM/NoPadding", "cfb": "AES/CFB/NoPadding"}
# "message": a fresh doFinal per message, with padding (AESNITester); "stream": update into a
# preallocated buffer, the message never finished (`openssl speed -evp`). Their gap is set-up cost.
SHAPES = ("message", "stream")
DIRECTIONS = ("encrypt", "decrypt")
AESNITESTER_MESSAGE_BYTES = 38
# `openssl speed`'s default sizes; the sweep runs them beside AESNITester's 38 bytes.
SPEED_SIZES = (16, 64, 256, 1024, 8192, 16384)
SWEEP_SIZES = tuple(sorted((AESNITESTER_MESSAGE_BYTES, *SPEED_SIZES)))
# Neighbours that bracket sizes where JDKs have changed code path: either side of 8 KiB and 16 KiB,
# and a 1 MiB one-shot message (against the sweep's 16 KiB).
CLIFF_SIZES = tuple(sorted({*SWEEP_SIZES, 8191, 8192, 16383, 16384, 1024 * 1024}))
_TEXT = b"The quick brown fox jumps over the lazy dog. "
# 10^12 messages already take about a day at JVM speed; more is a typo, not a plan.
MAX_ITERATIONS = 10**12
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# A timed round this long keeps timer and call costs far below 0.1% and rides out a scheduler hiccup.
ROUND_SECONDS = 0.5
MAX_ROUND_SECONDS = 3600.0
MAX_THREADS = 256
# Forks are added until the interval over forks is this narrow (relative half-width), or the limit.
TARGET_ERROR = 0.02
MAX_FORKS = 100


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


def check_iterations(count: int | Decimal) -> None:
    """ValueError, in one line however large ``count`` is, unless 1 <= count <= MAX_ITERATIONS."""
    if not 1 <= count <= MAX_ITERATIONS:
        # Decimal formats any size (a float overflows past 1e308; abs() a Decimal past 1e999999).
        shown = f"{count:,}" if isinstance(count, int) and -10**15 < count < 10**15 else f"{Decimal(count):.3g}"
        raise ValueError(f"iterations must be between 1 and {MAX_ITERATIONS:.0e}, not {shown}")


@dataclass(frozen=True)
class Operation:
    """What every engine computes: one cipher and direction on messages of one size, in one call shape."""
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
        """What each iteration of a native loop processes: the plaintext, or (decrypting) its
        ciphertext; a GCM stream's without the tag, which a never-finished stream never reaches."""
        if self.direction == "encrypt":
            return self.plaintext
        from jvmbridge.reference import encrypt_message  # pyca: loaded only where decryption is measured

        ciphertext = encrypt_message(self.key, self.iv, self.plaintext, self.mode)
        return ciphertext[:-16] if self.mode == "gcm" and self.shape == "stream" else ciphertext

    def as_dict(self) -> dict:
        padding = "PKCS#7 (PKCS5Padding)" if self.mode == "cbc" else "no padding"
        return {**asdict(self), "cipher": self.cipher_name, "padding": padding}


@dataclass(frozen=True)
class Sampling:
    """How an operation is timed: rounds per fork, forks until the interval is narrow, loops at once."""
    # None: each round runs for about round_seconds (pyperf's calibration); a count: exactly that many
    # messages per fork, split into the rounds (AESNITester's fixed loop).
    iterations: int | None = None
    # Few rounds and more forks: forks differ more than rounds inside one (benchmarks/README.md).
    rounds: int = 4
    # Each configuration's rounds per fork chosen from this host's earlier runs of it where there are
    # enough (jvmbridge.comparison.dimensioning); ``rounds`` where not. False: ``rounds`` as given.
    rounds_from_history: bool = False
    forks: int = 4  # at least this many fresh processes per configuration, each `rounds` rounds (JMH's forks)
    # More forks, up to max_forks, while the interval is wider than target_error. None: 3 x forks for
    # timed rounds; with a fixed iteration count the user fixed the work, so exactly `forks`.
    max_forks: int | None = None
    target_error: float = TARGET_ERROR
    round_seconds: float = ROUND_SECONDS
    # Loops running at once, each with its own cipher (`openssl speed -multi`): JVM threads,
    # pyca processes (the GIL), openssl processes. Figures are then the aggregate of all.
    threads: int = 1

    def __post_init__(self):
        if self.iterations is not None:
            check_iterations(self.iterations)
        if not 1 <= self.rounds <= (self.iterations or self.rounds):
            raise ValueError(f"rounds must be between 1 and the iteration count, not {self.rounds}")
        if not 1 <= self.threads <= MAX_THREADS:
            raise ValueError(f"threads must be between 1 and {MAX_THREADS}, not {self.threads}")
        if not 0.01 <= self.round_seconds <= MAX_ROUND_SECONDS:
            raise ValueError(f"round time must be between 0.01 and {MAX_ROUND_SECONDS:.0f} s, not {self.round_seconds}")
        if not 1 <= self.forks <= MAX_FORKS:
            raise ValueError(f"forks must be between 1 and {MAX_FORKS}, not {self.forks}")
        if not self.forks <= self.fork_limit <= MAX_FORKS:
            raise ValueError(f"max forks must be between --forks ({self.forks}) and {MAX_FORKS}, not {self.max_forks}")
        if not 0 < self.target_error < 1:
            raise ValueError(f"target error must be between 0 and 100%, not {self.target_error:.0%}")

    @property
    def fork_limit(self) -> int:
        if self.max_forks is not None:
            return self.max_forks
        return self.forks if self.iterations is not None else min(3 * self.forks, MAX_FORKS)

    @property
    def first_stage(self) -> int:
        """How many forks decide how many run (wants_another_fork), whose Stein interval bounds the
        row's (stats.summary.summarize): ``forks``, and at least two, since one fork shows no spread."""
        return max(self.forks, min(2, self.fork_limit))

    def wants_another_fork(self, forks: list[list[dict]], warmups: list[list[float]] | None = None) -> bool:
        """Fewer forks done than forks_planned says."""
        return len(forks) < self.forks_planned(forks, warmups)

    def forks_planned(self, forks: list[list[dict]], warmups: list[list[float]] | None = None) -> int:
        """How many forks run, as far as the ``forks`` done so far say: ``forks`` until the first
        stage is done, then as many as those first say it takes to bring the interval within the
        target (up to the limit), unless they sit at levels. Two stages, as Stein's procedure
        (stats.summary): stopping whenever the interval so far happens to look narrow would stop on luck
        (seen in tests/unit/test_stats.py's simulations: 91% of intervals covered for 95%). pyperf and
        JMH fix the count; a quiet machine then waits for nothing. ``warmups``: each fork's warm-up
        chunks, where the figure finds where forks settled (stats.summary.summarize)."""
        first = self.first_stage
        if len(forks) < first:
            return first
        return forks_needed(forks[:first], self.target_error, self.fork_limit,
                            warmups[:first] if warmups is not None else None)

    def budget(self) -> str:
        """How long each fork measures, in words for a report header."""
        parallel = f", {self.threads} loops at once" if self.threads > 1 else ""
        forks = (f"{self.forks} fork(s)" if self.fork_limit == self.forks else
                 f"{self.forks} to {self.fork_limit} forks until ±{self.target_error * 100:g}% ({CONFIDENCE:.0%}) "
                 "or levels")
        if self.iterations is None:
            chosen = " (or as this host's earlier runs chose: notes)" if self.rounds_from_history else ""
            return f"{self.rounds_asked} rounds of {self.round_seconds:g} s per fork{chosen}{parallel}, {forks}"
        each = " in each loop" if self.threads > 1 else ""
        return f"{self.iterations:,} messages per fork{each} in {self.rounds} rounds{parallel}, {forks}"

    @property
    def rounds_asked(self) -> int:
        """The rounds per fork as the run was asked: ``rounds``, or the default where they are left to
        history (dimensioning may have set a row's own: its note says so; the run's record and
        header describe the run, not its first row)."""
        return Sampling.rounds if self.rounds_from_history else self.rounds

    def as_dict(self) -> dict:
        """As the run's metadata records it: the rounds as asked (rounds_asked)."""
        return {**asdict(self), "rounds": self.rounds_asked, "budget": self.budget()}


@dataclass(frozen=True)
class Workload:
    """One operation, sampled one way: what each configuration of a comparison measures."""
    operation: Operation = Operation()
    sampling: Sampling = Sampling()

    def loop_request(self) -> LoopRequest:
        """What a worker needs to run this workload's timed loop: the inputs, and how long and how wide."""
        o, s = self.operation, self.sampling
        return LoopRequest(key=o.key.hex(), iv=o.iv.hex(), plaintext=o.plaintext.hex(), shape=o.shape,
                           direction=o.direction, iterations=s.iterations, rounds=s.rounds,
                           round_seconds=s.round_seconds, threads=s.threads)

    def seconds_at_most(self, warmup_max_seconds: float) -> float:
        """A generous bound on one fork's time for this workload, past which its child is taken to
        hang: the warm-up's limit, then the rounds at three times their planned length (with
        --iterations, or a message longer than a round, every message at 20 µs plus 50 ns a byte,
        slower than any AES seen here, Java's own included), and 5 s for the rest."""
        s = self.sampling
        per_message = 20e-6 + 50e-9 * self.operation.message_bytes
        timed = s.iterations * per_message if s.iterations else s.rounds * max(s.round_seconds, per_message)
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
    """Message sizes: 38, a list such as 16,64,256, "sweep" (openssl speed's sizes and 38) or
    "cliffs" (the sweep and the neighbours of known cliffs)."""
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
    """One workload per (key bits, mode), direction, size and shape, in that (report) order, all
    sampled alike."""
    return [Workload(Operation(key_bits=bits, mode=mode, direction=direction, message_bytes=size, shape=shape),
                     sampling)
            for bits, mode in dict.fromkeys(ciphers) for direction in dict.fromkeys(directions)
            for size in dict.fromkeys(sizes) for shape in dict.fromkeys(shapes)]
