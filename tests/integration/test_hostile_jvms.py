"""Issue 64's review: a user's process that passes for a JVM and answers HotSpot's attach protocol
with whatever its owner likes (python3 copied to a fake JDK's bin/java, as any user can do).
Root's `check --pid` and `check --all-jvms` read it; what it answers makes that JVM "not checked",
never the scan of the others, and never takes the scan past its budget."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from helpers import TENANT, needs_root, run_cli, tenant_folder

# The fake, run as TENANT: it catches SIGQUIT, listens at /tmp/.java_pid<pid> and answers each
# command; VM.version with sys.argv[2] as the JDK's version ("none": no JDK line). "slow" sends one byte every 2 s.
FAKE_JVM = """
import os, signal, socket, sys, time
signal.signal(signal.SIGQUIT, lambda *a: None)
path = f"/tmp/.java_pid{os.getpid()}"
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
listener.listen(5)
print("listening", flush=True)
FLAGS = "[Global flags]\\n bool UseAES = true {product} {default}\\n"
def reply(command):
    if command.startswith("VM.flags"):
        return "0\\n" + FLAGS
    if command.startswith("VM.version") and sys.argv[2] == "none":
        return "0\\n"
    if command.startswith("VM.version"):
        return f"0\\n{os.getpid()}:\\nOpenJDK 64-Bit Server VM version {sys.argv[2]}\\nJDK {sys.argv[2]}\\n"
    if command.startswith("VM.system_properties"):
        return "0\\njava.home=/x\\n"
    return "0\\n"
try:
    while True:
        connection, _ = listener.accept()
        data = b""
        while data.count(b"\\0") < 5:
            chunk = connection.recv(4096)
            if not chunk:
                break
            data += chunk
        out = reply(data.split(b"\\0")[2].decode() if data.count(b"\\0") >= 2 else "").encode()
        try:
            if sys.argv[1] == "slow":
                for byte in out:
                    connection.send(bytes([byte]))
                    time.sleep(2)
            else:
                connection.sendall(out)
        except OSError:
            pass
        connection.close()
finally:
    os.unlink(path)
"""


def _as_tenant():
    os.setgroups([])
    os.setresgid(TENANT, TENANT, TENANT)
    os.setresuid(TENANT, TENANT, TENANT)


@contextlib.contextmanager
def fake_jvms(*answers: tuple[str, str]):
    """One fake JVM per (mode, version): TENANT's processes whose executable is a fake JDK's java."""
    folder = tenant_folder()
    home = folder / "fjdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib" / "server").mkdir(parents=True)
    (home / "lib" / "server" / "libjvm.so").write_bytes(b"")
    (home / "release").write_text('JAVA_VERSION="FROM-THE-RELEASE-FILE"\n')
    shutil.copy(os.path.realpath(sys.executable), home / "bin" / "java")
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, TENANT, TENANT)
    fakes = []
    try:
        for mode, version in answers:
            fake = subprocess.Popen([str(home / "bin" / "java"), "-c", FAKE_JVM, mode, version], cwd=folder,
                                    stdout=subprocess.PIPE, text=True, preexec_fn=_as_tenant)
            fakes.append(fake)
            assert fake.stdout.readline() == "listening\n"
        yield [fake.pid for fake in fakes]
    finally:
        for fake in fakes:
            fake.kill()
            fake.wait()
            Path(f"/tmp/.java_pid{fake.pid}").unlink(missing_ok=True)
        shutil.rmtree(folder)


def check_document(*args: str) -> tuple[subprocess.CompletedProcess, dict]:
    done = run_cli("check", "--quiet", "--format", "json", "--no-verify", *args)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    return done, json.loads(done.stdout)


@needs_root
def test_a_version_int_refuses_is_that_jvms_unknown_not_the_scans_crash(tmp_path):
    """A JDK version of 5,000 digits or "²" was int()'s ValueError out of `check --all-jvms`: no metrics at all."""
    metrics = tmp_path / "jvms.prom"
    with fake_jvms(("fast", "9" * 5000), ("fast", "\u00b2"), ("fast", "17.0.15")) as (long, superscript, fine):
        done, document = check_document("--pid", str(long), "--pid", str(superscript), "--pid", str(fine),
                                         "--export-openmetrics", str(metrics))
    parts = {part["pid"]: part for part in document["live_jvms"]}
    assert set(parts) == {long, superscript, fine}
    for pid in (long, superscript, fine):
        assert "error" not in parts[pid], parts[pid]  # a version that is no number is an unknown major, 0
    assert parts[superscript]["version"] == "\u00b2"
    assert metrics.exists()


@needs_root
def test_slow_jvms_share_one_budget_for_the_whole_scan():
    """Three JVMs answering a byte every 2 s took 30 s each, one after another; now all share --scan-time."""
    with fake_jvms(("slow", "17.0.15"), ("slow", "17.0.15"), ("slow", "17.0.15")) as pids:
        started = time.monotonic()
        done, document = check_document(*[arg for pid in pids for arg in ("--pid", str(pid))], "--scan-time", "4")
        took = time.monotonic() - started
    assert took < 25, f"{took:.1f} s"  # 90 s before: 30 s per JVM
    errors = [part["error"] for part in document["live_jvms"]]
    assert len(errors) == 3, document["live_jvms"]
    assert any("the scan's time ran out" in error for error in errors), errors
    assert done.returncode == 2


@needs_root
def test_a_running_jvms_version_is_what_it_says_never_its_release_file_read_as_root():
    """A user's namespace bound /root into a fake JDK's home and linked release to a file there: a JVM
    whose VM.version had no JDK line was shown with the JAVA_VERSION root read from that file."""
    with fake_jvms(("fast", "none")) as (pid,):
        _, document = check_document("--pid", str(pid))
    (live,) = document["live_jvms"]
    assert live["version"] == "unknown", live
