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
from jvmbridge.measure import in_processes, round_counts, timed_rounds, warm_up

# OPENSSL_CPU_INFO, the OpenSSL_version() selector for the "CPUINFO: OPENSSL_ia32cap=…" text.
_OPENSSL_CPU_INFO = 9


try:  # cryptography 47+ keeps CFB among the "decrepit" modes and drops it from modes in 49
    from cryptography.hazmat.decrepit.ciphers.modes import CFB
except ImportError:
    CFB = modes.CFB

_MODES = {"cbc": modes.CBC, "ctr": modes.CTR, "gcm": modes.GCM, "cfb": CFB}
_PADDED = ("cbc", "ecb")


def _mode(mode: str, iv: bytes, tag: bytes | None = None):
    if mode == "ecb":
        return modes.ECB()
    return modes.GCM(iv, tag) if mode == "gcm" else _MODES[mode](iv)


def encrypt_message(key: bytes, iv: bytes, plaintext: bytes, mode: str = "cbc", aad: bytes = b"") -> bytes:
    """What the JCE's doFinal gives for the same transformation: CBC and ECB with PKCS#7 padding
    (PKCS5Padding), GCM (authenticating ``aad``) with its 16-byte tag appended, CTR and CFB as
    they are."""
    if mode in _PADDED:
        padder = PKCS7(128).padder()
        plaintext = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), _mode(mode, iv)).encryptor()
    if aad:
        encryptor.authenticate_additional_data(aad)
    ciphertext = encryptor.update(plaintext) + encryptor.finalize()
    return ciphertext + encryptor.tag if mode == "gcm" else ciphertext


def decrypt_message(key: bytes, iv: bytes, ciphertext: bytes, mode: str = "cbc", aad: bytes = b"") -> bytes:
    """The inverse of encrypt_message: GCM checks the appended tag, CBC and ECB strip the padding."""
    tag = None
    if mode == "gcm":
        ciphertext, tag = ciphertext[:-16], ciphertext[-16:]
    decryptor = Cipher(algorithms.AES(key), _mode(mode, iv, tag)).decryptor()
    if aad:
        decryptor.authenticate_additional_data(aad)
    plaintext = decryptor.update(ciphertext) + decryptor.finalize()
    if mode in _PADDED:
        unpadder = PKCS7(128).unpadder()
        plaintext = unpadder.update(plaintext) + unpadder.finalize()
    return plaintext


def library() -> str:
    return f"cryptography {cryptography.__version__}"


def reference() -> str:
    """What computed the expected bytes, e.g. "cryptography 48.0.0, OpenSSL 4.0.0 14 Apr 2026"."""
    return f"{library()}, {backend.openssl_version_text()}"


def _stream_context(key: bytes, iv: bytes, mode: str, decrypt: bool):
    cipher = Cipher(algorithms.AES(key), _mode(mode, iv))
    return cipher.decryptor() if decrypt else cipher.encryptor()


def stream_output(key: bytes, iv: bytes, data: bytes, updates: int, mode: str, decrypt: bool) -> bytes:
    """What ``updates`` updates of ``data`` on one fresh context give, never finished."""
    context = _stream_context(key, iv, mode, decrypt)
    return b"".join(context.update(data) for _ in range(updates))


def stream_loop(key: bytes, iv: bytes, data: bytes, mode: str, decrypt: bool):
    """A loop of `update_into` on one never-finished cipher context, as `openssl speed -evp`."""
    context = _stream_context(key, iv, mode, decrypt)
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


def handle(request: dict) -> dict:
    key, iv, plaintext = (bytes.fromhex(request[k]) for k in ("key", "iv", "plaintext"))
    mode, decrypt = request["mode"], request["direction"] == "decrypt"
    ciphertext = encrypt_message(key, iv, plaintext, mode)

    def message_loop(n: int) -> int:
        start = time.perf_counter_ns()
        for _ in range(n):
            if decrypt:
                decrypt_message(key, iv, ciphertext, mode)
            else:
                encrypt_message(key, iv, plaintext, mode)
        return time.perf_counter_ns() - start

    if request["shape"] == "stream":
        run = stream_loop(key, iv, ciphertext[:-16] if decrypt and mode == "gcm" else
                          (ciphertext if decrypt else plaintext), mode, decrypt)
    else:
        run = message_loop
    threads = request["threads"]
    with in_processes(run, threads) as loop:
        warmup = warm_up(loop, request["warmup_min_seconds"], request["warmup_max_seconds"])
        # A Python loop cannot do 1e8 messages in reasonable time: run what fits the rounds' time,
        # and report that count, not the one asked for.
        counts = round_counts(request["iterations"], request["rounds"], request["round_seconds"], warmup.ns_per_op,
                              time_capped=True)
        rounds = timed_rounds(loop, counts, threads)
    return {
        "library": library(),
        "openssl_version": backend.openssl_version_text(),
        "cpuinfo": cpuinfo(),
        "ciphertext": ciphertext.hex(),
        "warmup": warmup.as_dict(),
        "rounds": rounds,
    }


if __name__ == "__main__":
    serve(handle)
