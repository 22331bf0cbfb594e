"""Child process: OpenSSL through pyca/cryptography, per message or as a stream.

Message shape: each message gets a new encryptor and PKCS#7 padding, the closest Python gets
to ``doFinal``. Stream shape: `update_into` on one encryptor, as `openssl speed -evp`.
At small sizes the Python calls (microseconds) dominate OpenSSL's own work (tens of ns): the
report says so and sets the `openssl speed` C loop beside it.
"""
from __future__ import annotations

import time

from cryptography.hazmat.bindings.openssl.binding import Binding

from jvmbridge.forks.measure import in_processes, round_counts, spare_rounds, timed_rounds, warm_up
from jvmbridge.forks.protocol import MeasuredPycaPart
from jvmbridge.forks.worker import Save, each_part, serve
from jvmbridge.reference import decrypt_message, encrypt_message, library, openssl_version, stream_context

# OPENSSL_CPU_INFO, the OpenSSL_version() selector for the "CPUINFO: OPENSSL_ia32cap=…" text.
_OPENSSL_CPU_INFO = 9


def stream_loop(key: bytes, iv: bytes, data: bytes, mode: str, decrypt: bool):
    """A loop of `update_into` on one never-finished cipher context, as `openssl speed -evp`."""
    context = stream_context(key, iv, mode, decrypt)
    out = bytearray(len(data) + 15)

    def run(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            context.update_into(data, out)
        return time.perf_counter_ns() - start

    return run


def cpuinfo() -> str:
    binding = Binding()
    return binding.ffi.string(binding.lib.OpenSSL_version(_OPENSSL_CPU_INFO)).decode()


def handle(request: dict, save: Save) -> dict:
    return each_part(request, _measure,
                     {"library": library(), "openssl_version": openssl_version(), "cpuinfo": cpuinfo()}, save)


def _measure(request: MeasuredPycaPart) -> dict:
    key, iv, plaintext = (bytes.fromhex(request[k]) for k in ("key", "iv", "plaintext"))
    mode, decrypt = request["mode"], request["direction"] == "decrypt"
    ciphertext = encrypt_message(key, iv, plaintext, mode)
    data = bytes.fromhex(request["input"])  # what each iteration processes (Operation.loop_input)

    def message_loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            if decrypt:
                decrypt_message(key, iv, data, mode)
            else:
                encrypt_message(key, iv, plaintext, mode)
        return time.perf_counter_ns() - start

    if request["shape"] == "stream":
        run = stream_loop(key, iv, data, mode, decrypt)
    else:
        run = message_loop
    threads = request["threads"]
    with in_processes(run, threads) as loop:
        warmup = warm_up(loop, request["warmup_min_seconds"], request["warmup_max_seconds"])
        # A Python loop cannot do 1e8 messages in reasonable time: run what fits the rounds' time,
        # and report that count, not the one asked for.
        counts = round_counts(request["iterations"], request["rounds"], request["round_seconds"], warmup.ns_per_op,
                              time_capped=True)
        rounds = timed_rounds(loop, counts, threads, spare=spare_rounds(request["iterations"], counts))
    return {"ciphertext": ciphertext.hex(), "warmup": warmup.as_dict(), "rounds": rounds}


if __name__ == "__main__":
    serve(handle)
