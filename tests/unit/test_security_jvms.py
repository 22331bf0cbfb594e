"""Issue 45, items 6-9: what root does to running JVMs and reads of their JDKs holds against their owners.

Real processes throughout: a pid taken over through /proc/sys/kernel/ns_last_pid, a fake attach
listener of another uid that streams a gigabyte, JDK folders whose release file links out of a
container's root or is a 1 GiB sparse file, and a JVM whose JDK is removed under it.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_security_jvms.py."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import TENANT, needs_root, run_measured


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


@pytest.mark.parametrize("inside", [None, 'JAVA_VERSION="17.0.99"\n'], ids=["absent inside", "present inside"])
def test_a_containers_release_link_out_of_its_jdk_is_followed_neither_on_the_host_nor_inside(tmp_path,
                                                                                            root_only_release, inside):
    from jvmbridge.jvm.discovery import resolve_java

    root = tmp_path / "container"
    jdk = fake_jdk(root / "opt" / "jdk")
    (jdk / "release").symlink_to(root_only_release)  # absolute: the kernel would resolve it on the host
    if inside is not None:
        (root / str(root_only_release).lstrip("/")).parent.mkdir(parents=True)
        (root / str(root_only_release).lstrip("/")).write_text(inside)
    java = resolve_java("/opt/jdk/bin/java", root=root)
    assert java.home == jdk
    # Absolute: the kernel would resolve it on the host; out of the JDK: root would show a file
    # the caller may not see (issue 64, item 8).
    assert java.release_version == "unknown"


def test_a_release_link_to_a_file_only_root_may_read_is_not_read(tmp_path, root_only_release):
    from jvmbridge.jvm.discovery import resolve_java

    jdk = fake_jdk(tmp_path / "jdk")
    (jdk / "release").symlink_to(root_only_release)
    assert resolve_java(jdk).release_version == "unknown"


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
