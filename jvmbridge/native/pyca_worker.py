"""Worker process for the conductor: OpenSSL through pyca/cryptography, a slice at a time. Message:
a new encryptor and PKCS#7 padding each (Python's doFinal); stream: `update_into`, as speed -evp."""
from __future__ import annotations

import time

from cryptography.hazmat.bindings.openssl.binding import Binding

from jvmbridge.conductor.slices import Loop, Opened, copies, serve
from jvmbridge.reference import decrypt_message, encrypt_message, library, openssl_version, stream_context

# OpenSSL_version()'s selector for the "CPUINFO: ..." text.
_OPENSSL_CPU_INFO = 9


def stream_loop(key: bytes, iv: bytes, data: bytes, mode: str, decrypt: bool):
    """`update_into` on one never-finished context, as `openssl speed -evp`."""
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


def open_loops(request: dict) -> Opened:
    return ({"library": library(), "openssl_version": openssl_version(), "cpuinfo": cpuinfo()},
            [copies(_loop(part), part["threads"]) for part in request["parts"]])


def _loop(part: dict) -> Loop:
    key, iv, plaintext = (bytes.fromhex(part[k]) for k in ("key", "iv", "plaintext"))
    mode, decrypt = part["mode"], part["direction"] == "decrypt"
    ciphertext = encrypt_message(key, iv, plaintext, mode)
    data = bytes.fromhex(part["input"])  # what each iteration processes (Operation.loop_input)

    def message_loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            if decrypt:
                decrypt_message(key, iv, data, mode)
            else:
                encrypt_message(key, iv, plaintext, mode)
        return time.perf_counter_ns() - start

    run = stream_loop(key, iv, data, mode, decrypt) if part["shape"] == "stream" else message_loop
    return Loop(run=run, evidence=lambda: {"ciphertext": ciphertext.hex()})


if __name__ == "__main__":
    serve(open_loops)
