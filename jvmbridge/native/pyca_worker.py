"""Child process: OpenSSL through pyca/cryptography, per message or as a stream.

Message shape: each message gets a new encryptor and PKCS#7 padding, the closest Python gets
to ``doFinal``. Stream shape: `update_into` on one encryptor, as `openssl speed -evp`.
At small sizes the Python calls (microseconds) dominate OpenSSL's own work (tens of ns): the
report says so and sets the `openssl speed` C loop beside it.
"""
from __future__ import annotations

import time

import cryptography
from cryptography.hazmat.backends.openssl import backend
from cryptography.hazmat.bindings.openssl.binding import Binding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.padding import PKCS7

from jvmbridge.child import serve
from jvmbridge.measure import timed_rounds, warm_up

# OPENSSL_CPU_INFO, the OpenSSL_version() selector for the "CPUINFO: OPENSSL_ia32cap=…" text.
_OPENSSL_CPU_INFO = 9


try:  # cryptography 47+ keeps CFB among the "decrepit" modes and drops it from modes in 49
    from cryptography.hazmat.decrepit.ciphers.modes import CFB
except ImportError:
    CFB = modes.CFB

_MODES = {"cbc": modes.CBC, "ctr": modes.CTR, "gcm": modes.GCM, "cfb": CFB}


def encrypt_message(key: bytes, iv: bytes, plaintext: bytes, mode: str = "cbc") -> bytes:
    """What the JCE's doFinal gives for the same transformation: CBC with PKCS#7 padding
    (PKCS5Padding), GCM with its 16-byte tag appended, CTR and CFB as they are."""
    if mode == "cbc":
        padder = PKCS7(128).padder()
        plaintext = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), _MODES[mode](iv)).encryptor()
    ciphertext = encryptor.update(plaintext) + encryptor.finalize()
    return ciphertext + encryptor.tag if mode == "gcm" else ciphertext


def stream_loop(key: bytes, iv: bytes, plaintext: bytes, mode: str):
    """A loop of `update_into` on one never-finished encryptor, as `openssl speed -evp`."""
    encryptor = Cipher(algorithms.AES(key), _MODES[mode](iv)).encryptor()
    out = bytearray(len(plaintext) + 15)

    def run(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            encryptor.update_into(plaintext, out)
        return time.perf_counter_ns() - start

    return run


def cpuinfo() -> str:
    binding = Binding()
    return binding.ffi.string(binding.lib.OpenSSL_version(_OPENSSL_CPU_INFO)).decode()


def handle(request: dict) -> dict:
    key, iv, plaintext = (bytes.fromhex(request[k]) for k in ("key", "iv", "plaintext"))
    mode = request["mode"]

    def message_loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            encrypt_message(key, iv, plaintext, mode)
        return time.perf_counter_ns() - start

    run = stream_loop(key, iv, plaintext, mode) if request["shape"] == "stream" else message_loop
    warmup = warm_up(run, request["warmup_min_seconds"], request["warmup_max_seconds"])
    # A Python loop cannot do 1e8 messages in reasonable time: run what fits the time budget,
    # and report that count, not the one asked for.
    affordable = int(request["rounds"] * request["round_seconds"] * 1e9 / warmup.ns_per_op)
    iterations = max(request["rounds"], min(request["iterations"], affordable))
    return {
        "library": f"cryptography {cryptography.__version__}",
        "openssl_version": backend.openssl_version_text(),
        "cpuinfo": cpuinfo(),
        "ciphertext": encrypt_message(key, iv, plaintext, mode).hex(),
        "warmup": warmup.as_dict(),
        "rounds": timed_rounds(run, iterations, request["rounds"]),
    }


if __name__ == "__main__":
    serve(handle)
