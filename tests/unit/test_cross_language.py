"""The backbone: the Java harness's ciphertext equals OpenSSL's for the same key, IV and plaintext.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_cross_language.py."""
from __future__ import annotations

from helpers import SIZES, vectors

from jvmbridge.reference import encrypt_message


def test_vectors_cover_every_key_size_and_padding_edge():
    keys = {len(k) for k, _, _ in vectors()}
    sizes = {len(p) for _, _, p in vectors()}
    assert keys == {16, 24, 32}
    assert sizes == set(SIZES)
    # PKCS#7 always adds 1..16 bytes: a 16-byte plaintext becomes 32 bytes of ciphertext.
    assert len(encrypt_message(bytes(16), bytes(16), bytes(16))) == 32
