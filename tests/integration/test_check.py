"""`jvmbridge check`: verdicts from the real CPU, real JVM flags and real JIT logs; live JVMs.

Split by tier: here what needs a process; the rest is in tests/unit/test_check.py."""
from __future__ import annotations

import os
import subprocess

import pytest
from helpers import check_json, cpu_has_aes, jdk_homes, run_cli, stop_jvm, verdicts

from jvmbridge.harness import harness_jar


@pytest.mark.skipif(not cpu_has_aes(), reason="needs a CPU with AES-NI")
@pytest.mark.parametrize("home", jdk_homes(), ids=lambda home: home.name)
def test_defaults_are_active_with_jit_evidence(home):
    done, document = check_json("--java", str(home))
    assert done.returncode == 0, document
    (jdk,) = document["jdks"]
    found = verdicts(jdk)
    # The JIT log proves each intrinsic ran, and the short verify sweep that its bytes were right.
    assert {mode: v["status"] for mode, v in found.items()} == dict.fromkeys(("CBC", "CTR", "GCM"), "active, verified")
    assert all(jdk["verification"][mode]["status"] == "correct" for mode in found)
    assert "CipherBlockChaining::implEncrypt" in jdk["evidence"]["CBC"]["seen"]
    assert "CounterMode::implCrypt" in jdk["evidence"]["CTR"]["seen"]
    assert document["cpu"]["features"]["aes"]["present"]


def test_use_aes_off_is_disabled_by_a_flag_and_exits_1():
    done, document = check_json("--jvm-arg=-XX:-UseAES")
    assert done.returncode == 1
    for verdict in document["jdks"][0]["verdicts"]:
        assert verdict["status"] == "disabled by a flag"
        # CTR's own flag follows UseAES on x86 (not on aarch64): either way the command line is named.
        assert "UseAES=false" in verdict["reason"] and "command line]" in verdict["reason"]
        assert verdict["fix"] == "remove -XX:-UseAES from the JVM's command line"
    assert document["jdks"][0]["evidence"] == {}  # nothing to wait for when a flag decides it


def test_only_the_gated_mode_is_disabled():
    done, document = check_json("--jvm-arg=-XX:-UseAESCTRIntrinsics", "--mode", "cbc", "--mode", "ctr")
    assert done.returncode == 1
    found = verdicts(document["jdks"][0])
    assert found["CTR"]["status"] == "disabled by a flag"
    if cpu_has_aes():
        assert found["CBC"]["status"] == "active, verified"


def test_a_flag_forced_off_by_another_names_it():
    # HotSpot turns the CTR intrinsic off along with UseAESIntrinsics, labelling it {default}.
    done, document = check_json("--jvm-arg=-XX:-UseAESIntrinsics", "--mode", "ctr")
    assert done.returncode == 1
    assert verdicts(document["jdks"][0])["CTR"]["reason"] == (
        "UseAESIntrinsics=false [command line], UseAESCTRIntrinsics=false [follows UseAESIntrinsics=false, command line]")
    # The fix names the flag to change, not the one that followed it.
    assert verdicts(document["jdks"][0])["CTR"]["fix"] == "remove -XX:-UseAESIntrinsics from the JVM's command line"


def test_no_verify_trusts_the_jit_log_alone():
    done, document = check_json("--mode", "cbc", "--no-verify")
    if cpu_has_aes():
        assert done.returncode == 0 and verdicts(document["jdks"][0])["CBC"]["status"] == "active"
    assert document["jdks"][0]["verification"] == {}


def test_human_summary_leads_with_the_answer():
    done = run_cli("check", "--mode", "cbc", "--jvm-arg=-XX:TieredStopAtLevel=1")
    assert done.returncode == 1, done.stderr
    summary, answer, took = done.stdout.splitlines()[:3]
    assert summary == "AES acceleration is NOT active somewhere (see below)."
    assert answer.endswith(" with -XX:TieredStopAtLevel=1: CBC not usable "
                           "(fix: remove -XX:TieredStopAtLevel=1 from the JVM's command line)")
    assert took.startswith("  (checked in ") and "aes " in done.stdout


def test_a_jvm_refusing_the_options_could_not_tell():
    # Trusted, as root: the JVM is to refuse it, not jvmbridge's allow-list (tests/unit/test_option_files.py).
    done, document = check_json("--trust-jvm-arg", "--jvm-arg=-XX:+NoSuchFlag", "--mode", "cbc")
    assert done.returncode == 2
    assert "Unrecognized VM option 'NoSuchFlag'" in document["jdks"][0]["error"]


@pytest.fixture
def live_jvms():
    """Two real running JVMs, one with -XX:-UseAES, one with defaults."""
    java = str(jdk_homes()[0] / "bin" / "java")
    loop = ["-cp", str(harness_jar()), "jvmbridge.harness.AesHarness", "loop", "AES/CBC/PKCS5Padding", "16", "120"]
    started = [subprocess.Popen([java, *options, *loop]) for options in (["-XX:-UseAES"], [])]
    yield [p.pid for p in started]
    for process in started:
        stop_jvm(process)


def test_running_jvms_are_told_apart(live_jvms):
    off, on = live_jvms
    done, document = check_json("--pid", str(off), "--pid", str(on))
    assert done.returncode == 1
    assert document["jdks"] == []  # only --pid given: no JDK run
    by_pid = {live["pid"]: live for live in document["live_jvms"]}
    assert by_pid[off]["flags"]["UseAES"] == {"value": "false", "origin": "command line"}
    assert all(v["status"] == "disabled by a flag" for v in by_pid[off]["verdicts"])
    if cpu_has_aes():  # its code cache says whether C2 has compiled the CBC it runs yet; the other modes it never runs
        found = verdicts(by_pid[on])
        assert found["CBC"]["status"] in ("active, in use", "usable, not in use yet"), found
        assert found["CTR"]["status"] == found["GCM"]["status"] == "usable, not in use yet", found


@pytest.mark.serial  # attaches to every JVM on the machine (--all-jvms)
def test_all_jvms_finds_them(live_jvms):
    done, document = check_json("--all-jvms")
    assert {live["pid"] for live in document["live_jvms"]} >= set(live_jvms)


def test_pids_that_are_gone_or_not_jvms_are_bad_input_in_one_line():
    gone = subprocess.Popen(["true"])
    gone.wait()
    # pid 1 is init (here a sandbox's, whose executable even root may not read): not a JVM either way.
    done = run_cli("check", "--pid", str(gone.pid), "--pid", str(os.getpid()), "--pid", "1")
    assert done.returncode == 2 and not done.stdout
    (line,) = done.stderr.splitlines()
    gone_said, this_said, init_said = line.removeprefix("jvmbridge: error: ").split("; ")
    assert gone_said == f"pid {gone.pid}: no such process"
    assert this_said.startswith(f"pid {os.getpid()}: not a JVM") and init_said.startswith("pid 1: not a JVM")


def test_a_jvm_that_refuses_attach_is_told_apart():
    java = str(jdk_homes()[0] / "bin" / "java")
    loop = ["-cp", str(harness_jar()), "jvmbridge.harness.AesHarness", "loop", "AES/CBC/PKCS5Padding", "16", "120"]
    closed = subprocess.Popen([java, "-XX:+DisableAttachMechanism", *loop])
    try:
        done, document = check_json("--pid", str(closed.pid))
    finally:
        stop_jvm(closed)
    assert done.returncode == 2
    assert document["live_jvms"][0]["error"].startswith(f"pid {closed.pid}: attach failed (VM.flags): ")


def test_bad_java_path_is_a_usage_error(tmp_path):
    done = run_cli("check", "--java", str(tmp_path))
    assert done.returncode == 2 and "not a JVM" in done.stderr and len(done.stderr.splitlines()) == 1
