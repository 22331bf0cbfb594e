"""Issue 45, items 6-9: what root does to running JVMs and reads of their JDKs holds against their owners.

Real processes throughout: a pid taken over through /proc/sys/kernel/ns_last_pid, a fake attach
listener of another uid that streams a gigabyte, JDK folders whose release file links out of a
container's root or is a 1 GiB sparse file, and a JVM whose JDK is removed under it.

Split by tier: here what needs a process; the rest is in tests/unit/test_security_jvms.py."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import TENANT, jdk_homes, needs_root, run_measured, stop_jvm, tenant_folder, wait_attachable

from jvmbridge.harness import harness_jar

LOOP = ["-cp", str(harness_jar()), "jvmbridge.harness.AesHarness", "loop", "AES/CBC/PKCS5Padding", "16", "120"]


# -- 6: a pid taken over between discovery and attach ------------------------------------------

# A process that would be hurt by an attach: it records each SIGQUIT and what was in its working
# directory then (the trigger file an attach writes there before signalling).
SIGQUIT_RECORDER = """
import os, signal, sys, time
def record(number, frame):
    with open(sys.argv[1], "a") as out:
        out.write(" ".join(sorted(os.listdir("."))) + "\\n")
signal.signal(signal.SIGQUIT, record)
time.sleep(120)
"""


def start_with_pid(pid: int, argv: list[str], cwd: Path) -> subprocess.Popen:
    """``argv`` started as process ``pid`` (free now), through ns_last_pid: the next pid the kernel
    hands out is the one after it; another process forking meanwhile takes it, so try again."""
    for _ in range(50):
        with open("/proc/sys/kernel/ns_last_pid", "w") as last:
            last.write(str(pid - 1))
        started = subprocess.Popen(argv, cwd=cwd)
        if started.pid == pid:
            return started
        started.kill()
        started.wait()
    raise AssertionError(f"pid {pid} was not given to a new process in 50 tries")


@pytest.mark.serial  # takes a pid the whole machine hands out
@needs_root
def test_a_jvm_pid_taken_over_after_discovery_is_neither_written_to_nor_signalled():
    from jvmbridge.forks.parent import WorkerError
    from jvmbridge.jvm.live import live_flags, live_jvm

    jvm = subprocess.Popen([str(jdk_homes()[0] / "bin" / "java"), *LOOP], stdout=subprocess.DEVNULL)
    wait_attachable(jvm.pid)
    found = live_jvm(jvm.pid)  # as `check --all-jvms` finds it, before it waits on other JVMs
    stop_jvm(jvm)
    folder = tenant_folder()
    record = folder / "sigquit-record"
    newcomer = start_with_pid(found.pid, [sys.executable, "-c", SIGQUIT_RECORDER, str(record)], folder)
    try:
        wait_attachable(newcomer.pid)
        with pytest.raises(WorkerError) as refused:
            live_flags(found)
        assert newcomer.poll() is None
        assert not record.exists(), f"the newcomer was sent SIGQUIT, with {record.read_text()!r} in its folder"
        assert os.listdir(folder) == []  # no .attach_pid<pid>
    finally:
        newcomer.kill()
        newcomer.wait()
        shutil.rmtree(folder)
        found.process.close()
    said = str(refused.value)
    assert len(said.splitlines()) == 1
    assert said.startswith(f"pid {found.pid}: attach failed (VM.flags): pid {found.pid} ")
    assert "given up" in said


# -- 8: attach replies --------------------------------------------------------------------------

# A fake JVM of uid TENANT: HotSpot's attach socket at /tmp/.java_pid<its pid>, answering
# any command with "0" and then sys.argv[1] megabytes (it stops when the reader hangs up).
LISTENER = f"""
import sys
import ctypes, os, socket
os.setgroups([]); os.setresgid({TENANT}, {TENANT}, {TENANT}); os.setresuid({TENANT}, {TENANT}, {TENANT})
ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, which the change of uid cleared, as started by the uid
path = f"/tmp/.java_pid{{os.getpid()}}"
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
    listener.bind(path)
    try:
        listener.listen()
        print("listening", flush=True)
        connection, _ = listener.accept()
        connection.recv(4096)
        connection.sendall(b"0\\n")
        megabyte = b"x" * (1 << 20)
        try:
            for _ in range(int(sys.argv[1])):
                connection.sendall(megabyte)
        except OSError:
            pass
    finally:
        os.unlink(path)
"""

ATTACH_ONCE = """
import sys
from jvmbridge.jvm.attach import AttachError, jcmd
try:
    jcmd(int(sys.argv[1]), "VM.flags -all")
    print("read it all")
except AttachError as e:
    print(e)
"""


@needs_root
def test_a_gigabyte_attach_reply_is_one_line_and_little_memory():
    peaks = []
    # Just over the cap, then a gigabyte: the same refusal, so the same memory, whatever the
    # imports cost in this environment.
    for megabytes in (17, 1024):
        fake = subprocess.Popen([sys.executable, "-c", LISTENER, str(megabytes)], stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout.readline() == "listening\n"
            code, out, err, peak_kib = run_measured(sys.executable, "-c", ATTACH_ONCE, str(fake.pid))
        finally:
            fake.kill()
            fake.wait()
            Path(f"/tmp/.java_pid{fake.pid}").unlink(missing_ok=True)
        assert code == 0, err
        assert out.splitlines() == ["the JVM's reply is larger than 16 MiB: not read further"]
        peaks.append(peak_kib)
    # The reply is read in the attaching child and passed to root's parent, 16 MiB in each at most.
    assert peaks[1] - peaks[0] < 32 * 1024, f"{peaks} KiB"


# -- 9: a JVM whose JDK was removed or replaced since it started -------------------------------

def copied_jdk(real: Path, home: Path) -> Path:
    """A JDK at ``home`` whose java and libjvm.so are copies (what a running JVM maps), the rest
    linked to ``real``: removing ``home`` then does to a JVM what a JDK upgrade does."""
    def linked(folder: str, but: str) -> None:
        (home / folder).mkdir(parents=True)
        for entry in (real / folder).iterdir():
            if entry.name != but:
                (home / folder / entry.name).symlink_to(entry)

    linked(".", but="lib")
    (home / "bin").unlink()
    (home / "bin").mkdir()
    linked("lib", but="server")
    linked("lib/server", but="libjvm.so")
    for copied in ("bin/java", "lib/server/libjvm.so"):
        shutil.copy(real / copied, home / copied)
    return home


@pytest.fixture
def copied_home():
    """A copied JDK (copied_jdk) in a folder of its own, removed after the test."""
    folder = tenant_folder()
    yield copied_jdk(jdk_homes()[0], folder / "jdk")
    shutil.rmtree(folder)


@contextlib.contextmanager
def running(home: Path, *options: str):
    """A JVM of ``home`` running the AES loop, attachable; stopped after."""
    jvm = subprocess.Popen([str(home / "bin" / "java"), *options, *LOOP], stdout=subprocess.DEVNULL)
    try:
        wait_attachable(jvm.pid)
        yield jvm
    finally:
        stop_jvm(jvm)


def check_json(*args: str) -> tuple[subprocess.CompletedProcess, dict]:
    from helpers import run_cli

    done = run_cli("check", "--json", *args)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout, done.stderr
    return done, json.loads(done.stdout)


def test_a_jvm_whose_jdk_was_removed_is_still_checked(copied_home):
    from jvmbridge.jvm.discovery import resolve_java

    home = copied_home
    with running(home, "-XX:-UseAES") as jvm:
        shutil.rmtree(home)
        assert os.readlink(f"/proc/{jvm.pid}/exe") == f"{home}/bin/java (deleted)"
        _, by_pid = check_json("--pid", str(jvm.pid))
        _, scanned = check_json("--all-jvms")
    (live,) = by_pid["live_jvms"]
    # This test's JVM alone (other users' JVMs come and go); what its JIT compiled moves on between the reads.
    assert [moving_on(part) for part in scanned["live_jvms"] if part["pid"] == jvm.pid] == [moving_on(live)]
    assert "error" not in live, live
    assert live["java_home"] == f"{home} (deleted)"
    assert live["version"] == resolve_java(jdk_homes()[0]).release_version  # what the JVM itself says
    assert live["flags"]["UseAES"] == {"value": "false", "origin": "command line"}
    assert {v["status"] for v in live["verdicts"]} == {"disabled by a flag"}


def moving_on(live: dict) -> dict:
    """A running JVM's part of a check document less what its JIT changes from one read to the next."""
    return {name: value for name, value in live.items() if name != "code_cache"}


def test_a_jvm_that_ends_during_the_scan_is_left_out_not_a_failure():
    from jvmbridge.check.host import check_host
    from jvmbridge.intrinsics.modes import MODES
    from jvmbridge.jvm.live import all_live_jvms

    with running(jdk_homes()[0]) as staying:
        with running(jdk_homes()[0]) as ending:
            found = {live.pid: live for live in all_live_jvms() if live.pid in (staying.pid, ending.pid)}
        scanned = check_host([], (), [MODES["cbc"]], [], [found[ending.pid], found[staying.pid]], 5.0)
        alone = check_host([], (), [MODES["cbc"]], [], [found[staying.pid]], 5.0)
    assert [moving_on(live) for live in scanned["live_jvms"]] == [moving_on(live) for live in alone["live_jvms"]]
    assert scanned["exit_code"] == alone["exit_code"]


def test_a_jvm_whose_jdk_has_a_gigabyte_release_file_is_listed_unchecked_saying_why(copied_home):
    home = copied_home
    (home / "release").unlink()
    with open(home / "release", "wb") as release:
        release.truncate(1 << 30)
    with running(home) as jvm:
        done, by_pid = check_json("--pid", str(jvm.pid))
        _, scanned = check_json("--all-jvms")
    (live,) = by_pid["live_jvms"]
    assert done.returncode == 2
    assert live["error"] == f"pid {jvm.pid}: {home}/release: larger than 64 KiB, not a JDK's release file"
    assert [part for part in scanned["live_jvms"] if part["pid"] == jvm.pid] == [live]
