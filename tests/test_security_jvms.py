"""Issue 45, items 6-9: what root does to running JVMs and reads of their JDKs holds against their owners.

Real processes throughout: a pid taken over through /proc/sys/kernel/ns_last_pid, a fake attach
listener of another uid that streams a gigabyte, JDK folders whose release file links out of a
container's root or is a 1 GiB sparse file, and a JVM whose JDK is removed under it.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from helpers import TENANT, jdk_homes, stop_jvm, tenant_folder, wait_attachable
from jvmbridge.harness import harness_jar

LOOP = ["-cp", str(harness_jar()), "jvmbridge.harness.AesHarness", "loop", "AES/CBC/PKCS5Padding", "16", "120"]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the threat is root running check")


def run_measured(*argv: str, timeout: float = 120) -> tuple[int, str, str, int]:
    """Exit code, stdout, stderr, and the peak memory (KiB) of the process and of every process
    it waited for (its forked children): what the kernel's wait4 reports."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        watchdog = threading.Timer(timeout, process.kill)
        watchdog.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            watchdog.cancel()
            process.returncode = -1  # reaped by wait4: Popen must not wait for it again
        out.seek(0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), out.read(), err.read(), usage.ru_maxrss


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


@needs_root
def test_a_jvm_pid_taken_over_after_discovery_is_neither_written_to_nor_signalled():
    from jvmbridge.child import WorkerError
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


@pytest.mark.fast
@needs_root
def test_a_process_whose_uid_changes_is_given_up():
    from jvmbridge.jvm.process import ProcessChanged, TrackedProcess

    # Root until told, then uid TENANT for good: the same process, start time and pid.
    drops = subprocess.Popen([sys.executable, "-c", f"import os, sys, time; sys.stdin.readline(); "
                              f"os.setresuid({TENANT}, {TENANT}, {TENANT}); print('dropped', flush=True); "
                              "time.sleep(60)"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        tracked = TrackedProcess(drops.pid)
        tracked.ensure_same()
        drops.stdin.write("\n")
        drops.stdin.flush()
        assert drops.stdout.readline() == "dropped\n"
        with pytest.raises(ProcessChanged, match=rf"^pid {drops.pid} changed since it was found "
                                                 rf"\(start time \d+ -> \d+, uid 0 -> {TENANT}\): given up$"):
            tracked.send_signal(signal.SIGTERM)
        assert drops.poll() is None  # not signalled
    finally:
        drops.kill()
        drops.wait()
        tracked.close()


# -- 7: the JDK's release file ------------------------------------------------------------------

def fake_jdk(home: Path) -> Path:
    """Enough of a JDK for discovery: bin/java and lib/server/libjvm.so (empty files)."""
    for name in ("bin/java", "lib/server/libjvm.so"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).touch()
    return home


@pytest.fixture
def root_only_release(tmp_path) -> Path:
    """A host file only root may read, in the form of a release file."""
    secret = tmp_path / "host" / "release"
    secret.parent.mkdir()
    secret.write_text('JAVA_VERSION="host secret"\n')
    secret.chmod(0o600)
    return secret


@pytest.mark.fast
@pytest.mark.parametrize("inside", [None, 'JAVA_VERSION="17.0.99"\n'], ids=["absent inside", "present inside"])
def test_a_containers_absolute_release_link_is_followed_inside_its_root(tmp_path, root_only_release, inside):
    from jvmbridge.jvm.discovery import resolve_java

    root = tmp_path / "container"
    jdk = fake_jdk(root / "opt" / "jdk")
    (jdk / "release").symlink_to(root_only_release)  # absolute: the kernel would resolve it on the host
    if inside is not None:
        (root / str(root_only_release).lstrip("/")).parent.mkdir(parents=True)
        (root / str(root_only_release).lstrip("/")).write_text(inside)
    java = resolve_java("/opt/jdk/bin/java", root=root)
    assert java.home == jdk
    assert java.release_version == ("unknown" if inside is None else "17.0.99")


@pytest.mark.fast
def test_a_release_link_to_a_file_only_root_may_read_is_not_read(tmp_path, root_only_release):
    from jvmbridge.jvm.discovery import resolve_java

    jdk = fake_jdk(tmp_path / "jdk")
    (jdk / "release").symlink_to(root_only_release)
    assert resolve_java(jdk).release_version == "unknown"


@pytest.mark.fast
def test_a_gigabyte_release_file_is_one_line_and_little_memory(tmp_path):
    jdk = fake_jdk(tmp_path / "jdk")
    peaks = []
    # Just over the cap, then a gigabyte: the same refusal, so the same memory, whatever the
    # imports cost in this environment.
    for size in (65 * 1024, 1 << 30):
        with open(jdk / "release", "wb") as release:
            release.truncate(size)  # sparse: zeros that take no disk
        code, out, err, peak_kib = run_measured(sys.executable, "-m", "jvmbridge", "check", "--java", str(jdk))
        assert code == 2 and not out
        assert err.splitlines() == [f"jvmbridge: error: {jdk}/release: larger than 64 KiB, not a JDK's release file"]
        peaks.append(peak_kib)
    assert peaks[1] - peaks[0] < 32 * 1024, f"{peaks} KiB"


# -- 8: attach replies --------------------------------------------------------------------------

# A fake JVM of uid TENANT: HotSpot's attach socket at /tmp/.java_pid<its pid>, answering
# any command with "0" and then a gigabyte (it stops when the reader hangs up).
GIGABYTE_LISTENER = f"""
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
            for _ in range(1024):
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
    fake = subprocess.Popen([sys.executable, "-c", GIGABYTE_LISTENER], stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout.readline() == "listening\n"
        code, out, err, peak_kib = run_measured(sys.executable, "-c", ATTACH_ONCE, str(fake.pid))
    finally:
        fake.kill()
        fake.wait()
        Path(f"/tmp/.java_pid{fake.pid}").unlink(missing_ok=True)
    assert code == 0, err
    assert out.splitlines() == ["the JVM's reply is larger than 16 MiB: not read further"]
    # The reply is read in the attaching child and passed to root's parent: 16 MiB in each at most.
    assert peak_kib < 160 * 1024, f"{peak_kib} KiB"


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


def check_json(*args: str) -> tuple[subprocess.CompletedProcess, dict]:
    from helpers import run_cli

    done = run_cli("check", "--json", *args)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout, done.stderr
    return done, json.loads(done.stdout)


def test_a_jvm_whose_jdk_was_removed_is_still_checked():
    from jvmbridge.jvm.discovery import resolve_java

    folder = tenant_folder()
    home = copied_jdk(jdk_homes()[0], folder / "jdk")
    jvm = subprocess.Popen([str(home / "bin" / "java"), "-XX:-UseAES", *LOOP], stdout=subprocess.DEVNULL)
    try:
        wait_attachable(jvm.pid)
        shutil.rmtree(home)
        assert os.readlink(f"/proc/{jvm.pid}/exe") == f"{home}/bin/java (deleted)"
        _, by_pid = check_json("--pid", str(jvm.pid))
        _, scanned = check_json("--all-jvms")
    finally:
        stop_jvm(jvm)
        shutil.rmtree(folder)
    (live,) = by_pid["live_jvms"]
    assert [part for part in scanned["live_jvms"] if part["pid"] == jvm.pid] == [live]
    assert "error" not in live, live
    assert live["java_home"] == f"{home} (deleted)"
    assert live["version"] == resolve_java(jdk_homes()[0]).release_version  # what the JVM itself says
    assert live["flags"]["UseAES"] == {"value": "false", "origin": "command line"}
    assert {v["status"] for v in live["verdicts"]} == {"disabled by a flag"}


def test_a_jvm_whose_jdk_has_a_gigabyte_release_file_is_listed_unchecked_saying_why():
    folder = tenant_folder()
    home = copied_jdk(jdk_homes()[0], folder / "jdk")
    (home / "release").unlink()
    with open(home / "release", "wb") as release:
        release.truncate(1 << 30)
    jvm = subprocess.Popen([str(home / "bin" / "java"), *LOOP], stdout=subprocess.DEVNULL)
    try:
        wait_attachable(jvm.pid)
        done, by_pid = check_json("--pid", str(jvm.pid))
        _, scanned = check_json("--all-jvms")
    finally:
        stop_jvm(jvm)
        shutil.rmtree(folder)
    (live,) = by_pid["live_jvms"]
    assert done.returncode == 2
    assert live["error"] == f"pid {jvm.pid}: {home}/release: larger than 64 KiB, not a JDK's release file"
    assert [part for part in scanned["live_jvms"] if part["pid"] == jvm.pid] == [live]
