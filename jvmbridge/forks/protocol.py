"""The JSON the engines send conductor workers, typed so mypy holds both ends to the same fields."""
from __future__ import annotations

from typing import TypedDict


class LoopRequest(TypedDict):
    """One workload's timed loop: inputs in hex, duration and width."""
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


class JvmRequest(TypedDict):
    """The JVM worker's request, beside its parts."""
    libjvm: str
    options: list[str]
    classpath: list[str]
    provider_class: str | None
    provider_source: str | None
    read_flags: list[str]
