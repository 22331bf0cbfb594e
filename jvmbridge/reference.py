"""OpenSSL's bytes for an operation through pyca/cryptography: every engine's reference."""
from __future__ import annotations

from typing import Callable

import cryptography
from cryptography.hazmat.backends.openssl import backend
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.padding import PKCS7

try:  # cryptography 47+ keeps CFB among the "decrepit" modes and drops it from modes in 49
    from cryptography.hazmat.decrepit.ciphers.modes import CFB
except ImportError:
    CFB = modes.CFB  # type: ignore[misc]  # the same class, where cryptography still has it there

_MODES: dict[str, Callable[[bytes], modes.Mode]] = {"cbc": modes.CBC, "ctr": modes.CTR, "gcm": modes.GCM, "cfb": CFB}
_PADDED = ("cbc", "ecb")


def _mode(mode: str, iv: bytes, tag: bytes | None = None):
    if mode == "ecb":
        return modes.ECB()
    return modes.GCM(iv, tag) if mode == "gcm" else _MODES[mode](iv)


def encrypt_message(key: bytes, iv: bytes, plaintext: bytes, mode: str = "cbc", aad: bytes = b"") -> bytes:
    """What the JCE's doFinal gives: CBC and ECB with PKCS#7, GCM with its 16-byte tag appended (over
    ``aad``), CTR and CFB as they are."""
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


def openssl_version() -> str:
    """The OpenSSL pyca is linked with, e.g. "OpenSSL 4.0.0 14 Apr 2026"."""
    return backend.openssl_version_text()


def reference() -> str:
    """What computed the expected bytes, e.g. "cryptography 48.0.0, OpenSSL 4.0.0 14 Apr 2026"."""
    return f"{library()}, {openssl_version()}"


def stream_context(key: bytes, iv: bytes, mode: str, decrypt: bool):
    cipher = Cipher(algorithms.AES(key), _mode(mode, iv))
    return cipher.decryptor() if decrypt else cipher.encryptor()


def stream_output(key: bytes, iv: bytes, data: bytes, updates: int, mode: str, decrypt: bool) -> bytes:
    """What ``updates`` updates of ``data`` on one fresh context give, never finished."""
    context = stream_context(key, iv, mode, decrypt)
    return b"".join(context.update(data) for _ in range(updates))
