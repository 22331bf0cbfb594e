"""The guard agent in real JVMs: its pure-Java AES (CBC, CTR, GCM) against OpenSSL, its verdicts on good JDKs, on
Temurin 17.0.3's broken CTR stub (JDK-8292158) and on a planted wrong provider, and `check --pid`
reading it from outside over the attach socket."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from conftest import jdk_homes, run_cli, stop_jvm
from jvmbridge.guard.state import PROPERTY, parse
from jvmbridge.harness import guard_jar, harness_jar
from jvmbridge.jvm.live import live_property
from jvmbridge.jvm.messages import crash_reports

TEMURIN_25 = "/usr/lib/jvm/temurin-25-jdk-amd64"


def test_the_guards_own_aes_computes_openssls_bytes():
    # Every key size, each mode and direction, lengths either side of a block (GCM with and without AAD).
    for key_bytes in (16, 24, 32):
        for size in (0, 1, 15, 16, 17, 4097):
            key, iv, data = os.urandom(key_bytes), os.urandom(15) + b"\xff", os.urandom(size)
            padder = padding.PKCS7(128).padder()
            encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
            cbc = encryptor.update(padder.update(data) + padder.finalize()) + encryptor.finalize()
            encryptor = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
            ctr = encryptor.update(data) + encryptor.finalize()
            assert _reference("cbc", key, iv, data) == cbc
            assert _reference("cbc", key, iv, cbc, "decrypt") == data
            assert _reference("ctr", key, iv, data) == ctr  # the counter carries across bytes (iv ends in ff)
            nonce, aad = os.urandom(12), os.urandom(size % 20)
            gcm = AESGCM(key).encrypt(nonce, data, aad)
            assert _reference("gcm", key, nonce, data, "encrypt", aad.hex()) == gcm
            assert _reference("gcm", key, nonce, gcm, "decrypt", aad.hex()) == data


def _reference(mode: str, key: bytes, iv: bytes, data: bytes, *direction: str) -> bytes:
    done = subprocess.run(["java", "-cp", str(guard_jar()), "jvmbridge.guard.ReferenceAes", mode, key.hex(), iv.hex(),
                           data.hex(), *direction], capture_output=True, text=True, check=True)
    return bytes.fromhex(done.stdout.strip())


@pytest.mark.parametrize("java", ["java", TEMURIN_25])
def test_the_guard_verifies_cbc_ctr_and_gcm_in_a_good_jdk(java):
    if java != "java" and not os.path.isdir(java):
        pytest.skip(f"no {java}")
    done = run_cli("guard", "--java", java, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("JVM ") and "-javaagent:" in lines[0]
    assert [line.split()[:2] for line in lines[1:]] == [["CBC", "verified"], ["CTR", "verified"], ["GCM", "verified"]]
    assert all("of them on code C2 compiled" in line for line in lines[1:])


def _left_in_tmp() -> set[Path]:
    """What a JVM can leave in /tmp: attach sockets and flight recorder repositories (date_time_pid)."""
    tmp = Path(tempfile.gettempdir())
    return {*tmp.glob(".java_pid*"), *(p for p in tmp.iterdir() if re.fullmatch(r"\d{4}(_\d\d){5}_\d+", p.name))}


def test_the_guard_finds_ctr_wrong_on_temurin_17_0_3_and_never_crashes_it(known_bad_jdk):
    crashes, left = set(crash_reports().glob("hs_err_pid*")), _left_in_tmp()
    for _ in range(5):  # the same answer each time, and the server lives through every self-test
        done = run_cli("guard", "--java", str(known_bad_jdk), "--mode", "ctr", timeout=300)
        assert done.returncode == 1, done.stdout + done.stderr
        ctr = done.stdout.splitlines()[1]
        # Its stub stores past the bytes it returns (into the guard's slack), or returns wrong ones.
        assert ctr.startswith("  CTR  WRONG ") and "pattern, AES-" in ctr, ctr
        assert "differs" in ctr or "stored bytes past the" in ctr, ctr
    assert set(crash_reports().glob("hs_err_pid*")) == crashes  # a JVM that died would also fail the demo
    assert _left_in_tmp() == left  # each demo's JVM stopped as a server is, its scratch removed


def test_the_guard_finds_a_planted_provider_that_goes_wrong_once_warm(planted_jar):
    # Every doFinal(byte[]) after the 1,000th (in the 4th pass of 308 cases) gets a byte flipped: wrong once warm.
    done = run_cli("guard", "--mode", "ctr", "--provider", "planted.PlantedProvider", "--classpath", str(planted_jar),
                   "--jvm-arg=-Dplanted.after=1000", timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CTR  WRONG" in done.stdout and "oneshot pattern" in done.stdout


def test_check_reads_the_guard_of_a_running_jvm_and_says_where_there_is_none(tmp_path):
    java = str(jdk_homes()[0] / "bin" / "java")
    workload = ["-cp", str(harness_jar()), "jvmbridge.harness.AesWorkload", "3"]
    guarded = subprocess.Popen([java, f"-javaagent:{guard_jar()}=delay=0", *workload], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    plain = subprocess.Popen([java, *workload], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            time.sleep(1)
            try:
                said = live_property(guarded.pid, PROPERTY)
            except Exception:  # not attachable yet
                continue
            if said and all(state.settled for state in parse(said)):
                break
        done = run_cli("check", "--pid", str(guarded.pid), "--pid", str(plain.pid), "--format", "json")
        assert done.returncode in (0, 1), done.stderr
        document = json.loads(done.stdout)
        by_pid = {live["pid"]: live for live in document["live_jvms"]}
        assert [(s["mode"], s["status"]) for s in by_pid[guarded.pid]["guard"]] == [
            ("CBC", "verified"), ("CTR", "verified"), ("GCM", "verified")]
        assert by_pid[plain.pid]["guard"] == []
        table = run_cli("check", "--pid", str(guarded.pid), "--pid", str(plain.pid)).stdout
        assert "guard: CBC verified " in table and "guard: none (no jvmbridge guard agent in this JVM)" in table
        (tmp_path / "fleet").mkdir()
        (tmp_path / "fleet" / "host.json").write_text(done.stdout)
        fleet = list(csv.DictReader(io.StringIO(run_cli("report", str(tmp_path / "fleet"), "--format", "csv").stdout)))
        guards = {row["guard"] for row in fleet}
        assert "no guard" in guards and any(g.startswith("guard: CBC verified ") and ", GCM verified " in g for g in guards)
    finally:
        stop_jvm(guarded)
        stop_jvm(plain)


def test_the_mbean_says_what_the_property_says(tmp_path):
    classes = tmp_path / "classes"
    javac = subprocess.run(["javac", "--release", "11", "-d", str(classes),
                            str(Path(__file__).parent / "java" / "mbean" / "ReadGuard.java")], capture_output=True, text=True)
    assert javac.returncode == 0, javac.stderr
    done = subprocess.run(["java", f"-javaagent:{guard_jar()}=modes=ctr+gcm,delay=0", "-cp", str(classes),
                           "mbean.ReadGuard"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    state, modes, property_ = done.stdout.splitlines()
    assert modes == "CTR,GCM" and state == property_
    assert [s.status for s in parse(state)] == ["verified", "verified"]
