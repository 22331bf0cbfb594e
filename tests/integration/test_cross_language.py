"""The backbone: the Java harness's ciphertext equals OpenSSL's for the same key, IV and plaintext.

Split by tier: here what needs a process; the rest is in tests/unit/test_cross_language.py."""
from __future__ import annotations

import subprocess

import pytest
from helpers import SIZES, jdk_homes, provider_jar, vectors

from jvmbridge.harness import harness_jar
from jvmbridge.jvm.providers import PROVIDERS as JCE_PROVIDERS
from jvmbridge.reference import encrypt_message
from jvmbridge.sampling.workload import KEY_BITS, TRANSFORMATIONS

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
