"""The systemd service and timer shipped in jvmbridge/monitoring: systemd-analyze accepts them, and
the service's command, in a sandbox made as the unit asks (no systemd runs on a test machine: the
mount namespace, network namespace, capability bounding set and no_new_privs are made here with
unshare and setpriv), reads another user's JVM and writes its metrics; without the capabilities
the unit keeps, it cannot. Needs root, as the service does."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO, TENANT, cannot, jdk_homes, needs_root, run_cli, stop_jvm, tenant_folder, wait_attachable
from prometheus_client.parser import text_string_to_metric_families

UNITS = REPO / "jvmbridge" / "monitoring"
SERVICE = UNITS / "jvmbridge-check.service"
TEXTFILE_FOLDER = "/var/lib/prometheus/node-exporter"  # Debian's node_exporter reads it; the unit writes there


def joined(path: Path) -> str:
    """A unit file's text with its continued lines joined."""
    return re.sub(r"\\\n\s*", " ", path.read_text())


def unit_settings(path: Path) -> dict[str, str]:
    """A unit file's settings (the last of each name)."""
    return dict(line.split("=", 1) for line in joined(path).splitlines() if "=" in line and not line.startswith("#"))


def as_run_here(command: str) -> list[str]:
    """The unit's ExecStart with this checkout's jvmbridge (not installed as a command here)."""
    words = shlex.split(command)
    assert words[0] == "jvmbridge"  # found in systemd's fixed search path, /usr/local/bin (pip) or /usr/bin
    return [sys.executable, "-m", "jvmbridge", *words[1:]]


def tools(*programs: str) -> None:
    missing = [program for program in programs if not shutil.which(program)]
    if missing:
        cannot(f"needs {' and '.join(missing)} (Debian packages systemd, util-linux)")


def test_systemd_accepts_the_service_and_the_timer(tmp_path):
    tools("systemd-analyze")
    shown = run_cli("check", "--print-monitoring")  # where the README's set-up copies them from
    assert shown.returncode == 0 and Path(shown.stdout.strip()) == UNITS, shown.stderr
    settings = unit_settings(SERVICE)
    service = tmp_path / SERVICE.name
    service.write_text(joined(SERVICE).replace(settings["ExecStart"], shlex.join(as_run_here(settings["ExecStart"]))))
    shutil.copy(UNITS / "jvmbridge-check.timer", tmp_path)
    verified = subprocess.run(["systemd-analyze", "verify", "--man=no", str(service), str(tmp_path / "jvmbridge-check.timer")],
                              capture_output=True, text=True)
    assert verified.returncode == 0, verified.stderr
    assert f" --export-openmetrics {TEXTFILE_FOLDER}/jvmbridge.prom" in settings["ExecStart"]
    assert settings["ReadWritePaths"] == TEXTFILE_FOLDER and settings["ProtectSystem"] == "strict"


@pytest.fixture
def tenant_jvm() -> Iterator[int]:
    """A JVM of another user (uid TENANT, no account) started with -XX:-UseAES, in a folder of its
    own: its pid."""
    folder = tenant_folder()
    program = folder / "Sleeps.java"
    program.write_text("class Sleeps { public static void main(String[] a) throws Exception { Thread.sleep(300_000); } }\n")
    program.chmod(0o644)
    shutil.chown(folder, TENANT, TENANT)
    java = jdk_homes()[0] / "bin" / "java"
    process = subprocess.Popen(["setpriv", f"--reuid={TENANT}", f"--regid={TENANT}", "--clear-groups", str(java),
                                "-XX:-UseAES", str(program)], cwd=folder, stdout=subprocess.DEVNULL)
    try:
        wait_attachable(process.pid)
        yield process.pid
    finally:
        stop_jvm(process)
        shutil.rmtree(folder)


# The service's sandbox: the whole file system read-only but its own folders (ProtectSystem=strict,
# ReadWritePaths=, StateDirectory=, CacheDirectory=), a /tmp of its own (PrivateTmp=), no network
# (PrivateNetwork=), then no_new_privs and the capability bounding set (NoNewPrivileges=,
# CapabilityBoundingSet=) for the command. The folders named before `--` (this checkout and this
# Python, where they are under /tmp) are mounted again in the new /tmp from the host's, kept aside
# in WRITABLE/host-tmp, as an installed jvmbridge would be outside /tmp.
_SANDBOX = ('writable=$0; caps=$1; shift; mount --make-rprivate / && mount --bind "$writable" "$writable" '
            '&& mkdir -p "$writable/host-tmp" && mount --bind /tmp "$writable/host-tmp" '
            '&& mount -o remount,bind,ro / && mount -t tmpfs tmpfs /tmp || exit 1; '
            'while [ "$1" != -- ]; do mkdir -p "$1" && mount --bind "$writable/host-tmp/${1#/tmp/}" "$1" || exit 1; '
            'shift; done; shift; exec setpriv --no-new-privs --bounding-set="$caps" --inh-caps=-all -- "$@"')


# What systemd gives a unit without Environment=PATH (`systemd-path search-binaries-default`), not the
# test's own, whose folders may be under /tmp.
SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def run_sandboxed(command: list[str], writable: Path, capabilities: str) -> subprocess.CompletedProcess:
    bounding = ",".join(["-all", *(f"+{cap.lower().removeprefix('cap_')}" for cap in capabilities.split())])
    needed = sorted({Path(folder).resolve() for folder in (REPO, sys.prefix, sys.base_prefix)})
    in_tmp = [str(folder) for folder in needed if folder.is_relative_to("/tmp")]  # parents before children
    return subprocess.run(["unshare", "--mount", "--net", "--fork", "sh", "-c", _SANDBOX, str(writable), bounding,
                           *in_tmp, "--", "env", f"PYTHONPATH={REPO}", f"XDG_DATA_HOME={writable}/state",
                           f"XDG_CACHE_HOME={writable}/cache", *command],
                          capture_output=True, text=True, timeout=300, cwd=REPO, env={**os.environ, "PATH": SYSTEMD_PATH})


@needs_root
def test_the_service_reads_another_users_jvm_with_the_capabilities_it_keeps_and_not_without(tenant_jvm):
    tools("unshare", "setpriv")
    settings = unit_settings(SERVICE)
    # Not under /tmp, which the sandbox replaces: a folder of the test's where the unit's would be.
    writable = Path(tempfile.mkdtemp(prefix="jvmbridge-unit-", dir="/var/tmp"))
    try:
        textfiles = writable / "textfile"
        textfiles.mkdir()
        command = [word.replace(TEXTFILE_FOLDER, str(textfiles)) for word in as_run_here(settings["ExecStart"])]
        done = run_sandboxed(command, writable, settings["CapabilityBoundingSet"])
        assert done.returncode in (0, 1, 2) and not done.stderr, done.stderr  # SuccessExitStatus=1 2
        jvm = {"pid": str(tenant_jvm), "main_class": tenant_program(tenant_jvm)}
        exported = read_metrics(textfiles / "jvmbridge.prom")
        assert values(exported["jvmbridge_target_checked"], **jvm) == [1]
        assert values(exported["jvmbridge_aes_intrinsics_active"], **jvm) == [0, 0, 0]  # CBC, CTR, GCM
        # Root without them does not get at the other user's JVM: listed as not checked, or (its perf
        # data hidden by the private /tmp) not even known for a JVM.
        refused = run_sandboxed(command, writable, "")
        assert refused.returncode in (0, 1, 2) and not refused.stderr, refused.stderr
        exported = read_metrics(textfiles / "jvmbridge.prom")
        assert values(exported.get("jvmbridge_target_checked", []), pid=str(tenant_jvm)) in ([], [0])
        assert not values(exported.get("jvmbridge_aes_intrinsics_active", []), pid=str(tenant_jvm))
    finally:
        shutil.rmtree(writable)


def tenant_program(pid: int) -> str:
    """What check names as the tenant JVM's main class: its source file, as its command line has it."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[-2].decode()


def read_metrics(path: Path) -> dict[str, list]:
    return {family.name: family.samples for family in text_string_to_metric_families(path.read_text())}


def values(samples: list, **labels: str) -> list[float]:
    return [s.value for s in samples if labels.items() <= s.labels.items()]
