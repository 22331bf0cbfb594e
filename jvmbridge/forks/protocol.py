"""What a parent asks a measuring child and what the child answers, as the JSON between them:
typed here so that mypy holds both ends to the same fields (forks/parent.py runs the children;
the workers, on forks/worker.py, are jvm/worker.py, native/pyca_worker.py and native/c_worker.py)."""
from __future__ import annotations

from typing import TypedDict


class LoopRequest(TypedDict):
    """One workload's timed loop (Workload.loop_request): the inputs in hex, and how long and how wide."""
    key: str
    iv: str
    plaintext: str
    shape: str  # "message" or "stream"
    direction: str  # "encrypt" or "decrypt"
    iterations: int | None  # None: rounds of round_seconds; a count: exactly that many messages
    rounds: int
    round_seconds: float
    threads: int


class JvmPart(LoopRequest):
    transformation: str  # as the JCE names it: AES/CBC/PKCS5Padding


class PycaPart(LoopRequest):
    mode: str  # cbc, ctr, gcm, cfb
    input: str  # hex: what each iteration processes (Operation.loop_input)


class CPart(LoopRequest):
    input: str
    cipher: str  # as OpenSSL names it: aes-256-cbc


class Warmups(TypedDict):
    """The warm-up each part gets; each_part puts the request's beside every part."""
    warmup_min_seconds: float
    warmup_max_seconds: float


class JvmRequest(Warmups):
    """The JVM worker's request, beside its parts."""
    libjvm: str
    options: list[str]
    classpath: list[str]
    provider_class: str | None
    provider_source: str | None
    read_flags: list[str]
    later_warmup_min_seconds: float


class MeasuredJvmPart(JvmPart, Warmups):
    """What the JVM worker measures: a part with the request's warm-up beside it (each_part)."""


class MeasuredPycaPart(PycaPart, Warmups):
    """What the pyca worker measures."""


class MeasuredCPart(CPart, Warmups):
    """What the C loop's worker measures."""


class Round(TypedDict):
    """One timed round: messages (all threads') in nanoseconds of wall time."""
    iterations: int
    ns: int


class JvmRound(Round):
    gc_ms: int  # GC time during the round, as the JVM's collectors count it
    jit_ms: int  # JIT compilation time during the round
