"""The backbone: the Java harness's ciphertext equals OpenSSL's for the same key, IV and plaintext."""
from __future__ import annotations

import subprocess

import pytest

from helpers import jdk_homes, provider_jar
from jvmbridge.harness import harness_jar
from jvmbridge.jvm.providers import PROVIDERS as JCE_PROVIDERS
from jvmbridge.reference import encrypt_message
from jvmbridge.workload import KEY_BITS, TRANSFORMATIONS, Operation

SIZES = (0, 1, 15, 16, 17, 38, 4096)


def vectors(mode: str = "cbc") -> list[tuple[bytes, bytes, bytes]]:
    return [(w.key, w.iv, w.plaintext) for bits in KEY_BITS for size in SIZES
            for w in [Operation(key_bits=bits, message_bytes=size, mode=mode)]]


PROVIDERS = {"SunJCE": None, "BC": "bcprov", "ACCP": "AmazonCorrettoCryptoProvider"}


@pytest.mark.parametrize("mode", TRANSFORMATIONS)
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("home", jdk_homes(), ids=lambda home: home.name)
def test_java_ciphertext_equals_openssl(home, provider, mode):
    classpath, extra = [str(harness_jar())], []
    if PROVIDERS[provider]:
        classpath.append(str(provider_jar(PROVIDERS[provider])))
        extra.append(JCE_PROVIDERS[provider].class_name)
    lines = "".join(f"{k.hex()} {iv.hex()} {p.hex() or '-'}\n" for k, iv, p in vectors(mode))
    done = subprocess.run([str(home / "bin" / "java"), "-cp", ":".join(classpath), "jvmbridge.harness.AesHarness",
                           "vectors", TRANSFORMATIONS[mode], *extra],
                          input=lines, capture_output=True, text=True, timeout=120)
    if "NoSuchAlgorithmException" in done.stderr:
        pytest.skip(f"{provider} does not offer {TRANSFORMATIONS[mode]}")
    assert done.returncode == 0, done.stderr
    java = done.stdout.splitlines()  # CTR/CFB/GCM of an empty message is (nearly) empty: keep its line
    openssl = [encrypt_message(k, iv, p, mode).hex() for k, iv, p in vectors(mode)]
    assert len(java) == len(openssl) == len(KEY_BITS) * len(SIZES)
    assert java == openssl


@pytest.mark.fast
def test_vectors_cover_every_key_size_and_padding_edge():
    keys = {len(k) for k, _, _ in vectors()}
    sizes = {len(p) for _, _, p in vectors()}
    assert keys == {16, 24, 32}
    assert sizes == set(SIZES)
    # PKCS#7 always adds 1..16 bytes: a 16-byte plaintext becomes 32 bytes of ciphertext.
    assert len(encrypt_message(bytes(16), bytes(16), bytes(16))) == 32
