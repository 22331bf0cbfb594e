"""The fleet: a real `ansible-playbook` run over real SSH (Debian's sshd on 127.0.0.1 ports, one
per host) against hosts that differ, then the fleet report on what came back.

Split by tier: here what needs a process; the rest is in tests/unit/test_fleet.py."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, cannot, jdk_homes, run_cli, stop_jvm

from jvmbridge.fleet.report import fleet_of, read_documents
from jvmbridge.harness import harness_jar

SSHD = "/usr/sbin/sshd"
# Each task's module sent to the host in the command's stdin, as many fleets set it (Ansible's docs suggest
# it for speed): one SSH command a task instead of 4-5 (a temporary folder made, the module copied, run,
# removed); measured, a task on 4 hosts took 1.5 s instead of 5 on a busy 2-vCPU machine. The play does
# the same either way; Ansible's default, a module copied over, runs in the large-document test below.
PIPELINING = "ansible_pipelining=true"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ssh_hosts(tmp_path_factory):
    """A function giving N sshd instances on loopback (root logs in with a key made here), and the
    private key; stopped after the module."""
    if not (Path(SSHD).is_file() and shutil.which("ssh") and shutil.which("ansible-playbook")):
        cannot("needs sshd and ansible-playbook: `apt-get install openssh-server` and `pip install '.[fleet]'`")
    keys = tmp_path_factory.mktemp("ssh")
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_text((keys / "client_key.pub").read_text())
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    started = []

    def start() -> int:
        port = _free_port()
        config = keys / f"sshd-{port}.conf"
        config.write_text(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host_key'}\n"
                          f"PidFile {keys / f'sshd-{port}.pid'}\nAuthorizedKeysFile {keys / 'authorized_keys'}\n"
                          "PermitRootLogin prohibit-password\nPasswordAuthentication no\nStrictModes no\nUsePAM no\n"
                          "AcceptEnv LANG LC_*\n")
        started.append(subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL))
        for _ in range(50):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return port
            time.sleep(0.1)
        raise RuntimeError(f"sshd did not listen on {port}")

    yield start, keys / "client_key"
    for process in started:
        process.kill()
        process.wait()


@pytest.fixture
def aes_off_jvm():
    """A real running JVM started with -XX:-UseAES, as a misconfigured service would be."""
    java = str(jdk_homes()[0] / "bin" / "java")
    process = subprocess.Popen([java, "-XX:-UseAES", "-cp", str(harness_jar()), "jvmbridge.harness.AesHarness", "loop",
                                "AES/CBC/PKCS5Padding", "16", "300"])
    yield process.pid
    stop_jvm(process)


def test_fleet_reports_exactly_the_hosts_and_jvms_that_are_off_wrong_or_unreachable(
        ssh_hosts, aes_off_jvm, known_bad_jdk, tmp_path):
    start, key = ssh_hosts
    wheel_dir = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheel_dir), str(REPO)],
                   check=True, capture_output=True)
    here = f"{sys.executable} -m jvmbridge"
    python = tmp_path / "a python"
    python.symlink_to(sys.executable)
    hosts = {
        # A healthy host.
        "web-1": f"jvmbridge_command='{here}' jvmbridge_check_args='--no-verify'",
        # A service running with -XX:-UseAES.
        "app-1": f"jvmbridge_command='{here}' jvmbridge_check_args='--pid {aes_off_jvm}'",
        # A JDK whose CTR intrinsic computes wrong bytes on this CPU (Temurin 17.0.3, JDK-8292158).
        "batch-1": f"jvmbridge_command='{here}' jvmbridge_check_args='--java {known_bad_jdk} --mode ctr'",
        # No jvmbridge yet: the play installs the wheel into a venv first (its path and its Python's have a space).
        "new-1": f"jvmbridge_venv='{tmp_path / 'a venv'}' jvmbridge_python='{python}' "
                 "jvmbridge_check_args='--no-verify --mode cbc'",
    }
    lines = [f"{name} ansible_host=127.0.0.1 ansible_port={start()} {variables}" for name, variables in hosts.items()]
    lines.append(f"gone-1 ansible_host=127.0.0.1 ansible_port={_free_port()}")  # nothing listens there
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("\n".join(lines) + "\n\n[all:vars]\nansible_user=root\n"
                         f"ansible_ssh_private_key_file={key}\nansible_python_interpreter={sys.executable}\n"
                         "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n"
                         f"{PIPELINING}\n")
    out = tmp_path / "fleet"
    def play_files() -> set[Path]:  # the play's folders, and what it wrote in /tmp before it had them
        return {*Path("/tmp").glob("jvmbridge-play-*"), *Path("/tmp").glob("jvmbridge-check-*"),
                *Path("/tmp").glob("jvmbridge-*.whl")}

    in_tmp = play_files()
    done = run_cli("fleet", str(inventory), "--out", str(out), "--wheel", str(next(wheel_dir.glob("*.whl"))),
                   "--format", "json", timeout=1200)
    # The play worked in private temporary folders (the hosts' /tmp is this machine's) and removed them.
    assert play_files() == in_tmp
    assert "Traceback" not in done.stderr
    assert done.stdout, done.stderr[-4000:]
    report = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr[-3000:]  # something is off or wrong (outranks "not checked")
    verdicts = {(row["host"], row["mode"]): row for row in report["rows"]}
    assert {host for host, _ in verdicts} == {"web-1", "app-1", "batch-1", "new-1"}
    assert report["unchecked"].keys() == {"gone-1"} and report["unchecked"]["gone-1"].startswith("unreachable")
    assert verdicts[("batch-1", "CTR")]["status"] == "active but WRONG"
    assert "UnlockDiagnosticVMOptions -XX:-UseAESCTRIntrinsics" in verdicts[("batch-1", "CTR")]["fix"]
    assert all(verdicts[("app-1", mode)]["status"] == "disabled by a flag" for mode in ("CBC", "CTR", "GCM"))
    assert verdicts[("app-1", "CBC")]["jvm"].startswith(f"pid {aes_off_jvm} ")
    assert {verdicts[("web-1", mode)]["status"] for mode in ("CBC", "CTR", "GCM")} == {"active"}
    assert verdicts[("new-1", "CBC")]["status"] == "active"
    assert (tmp_path / "a venv" / "bin" / "jvmbridge").exists()  # checked by the wheel installed there
    assert report["summary"].startswith("5 hosts, 4 JDKs and JVMs checked; 1 computing WRONG bytes: batch-1 ")
    assert "1 host not checked: gone-1" in report["summary"]
    # The saved folder reports the same later, as a table.
    again = run_cli("report", str(out))
    assert again.returncode == 1 and report["summary"] in again.stdout


def test_a_report_of_saved_documents_exits_2_when_a_host_was_not_checked(tmp_path):
    for name, document in (("a", {"host": "a", "jdks": [], "live_jvms": [], "exit_code": 2}),
                           ("b", {"host": "b", "unchecked": "unreachable: Connection refused"})):
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
    fleet = fleet_of(read_documents(sorted(tmp_path.glob("*.json"))))
    assert fleet.exit_code == 2 and fleet.unchecked == {"b": "unreachable: Connection refused"}
    done = run_cli("report", str(tmp_path), "--format", "csv")
    assert done.returncode == 2 and "b,-,-,not checked,unreachable: Connection refused," in done.stdout


def test_report_refuses_a_folder_without_check_documents(tmp_path):
    (tmp_path / "x.json").write_text("[1, 2]")
    done = run_cli("report", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_fleet_refuses_a_missing_inventory_in_one_line(tmp_path):
    done = run_cli("fleet", str(tmp_path / "hosts.ini"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "no such inventory" in done.stderr


def test_what_ansible_prints_of_a_host_reaches_the_terminal_escaped(tmp_path):
    """Ansible writes a host's name (and what hosts said) as it is: relayed, it is escaped."""
    if not (shutil.which("ssh") and shutil.which("ansible-playbook")):
        cannot("needs ssh and ansible-playbook: `apt-get install openssh-client` and `pip install '.[fleet]'`")
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(f"gone\x1b]0;pwned\x07 ansible_host=127.0.0.1 ansible_port={_free_port()}\n")
    done = run_cli("fleet", str(inventory), "--out", str(tmp_path / "fleet"), timeout=300)
    assert done.returncode == 2 and "UNREACHABLE" in done.stderr, done.stderr[-2000:]
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr and r"[gone\x1b]0;pwned\x07]" in done.stderr


def test_fleet_compare_puts_each_hosts_run_in_its_own_column(ssh_hosts, tmp_path):
    start, key = ssh_hosts
    # Its data (the host's speed, which an interleaved compare keeps) in the test's folder, not the user's.
    here = f"env XDG_DATA_HOME={tmp_path / 'remote-data'} {sys.executable} -m jvmbridge"
    quick = "--engine openssl-cli --sizes 16 --round-time 0.1 --rounds 3 --forks 1 --max-forks 1"
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(
        "\n".join(f"{name} ansible_host=127.0.0.1 ansible_port={port}" for name, port in
                  (("web-1", start()), ("web-2", start()), ("gone-1", _free_port())))
        + f"\n\n[all:vars]\nansible_user=root\nansible_ssh_private_key_file={key}\n"
          f"ansible_python_interpreter={sys.executable}\njvmbridge_command='{here}'\njvmbridge_compare_args='{quick}'\n"
          "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n"
          f"{PIPELINING}\n")
    done = run_cli("fleet", str(inventory), "--compare", "--out", str(tmp_path / "out"), timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]  # gone-1 gave no run
    header = next(line for line in done.stdout.splitlines() if "web-1" in line)
    assert "web-2" in header, done.stdout
    assert "gone-1: no run (unreachable" in done.stderr
    assert sorted(p.name for p in (tmp_path / "out").glob("*.jsonl")) == ["web-1.jsonl", "web-2.jsonl"]


def test_a_document_larger_than_report_reads_is_not_fetched_and_its_host_not_checked(ssh_hosts, tmp_path):
    """A host's 300 MB document was fetched whole into --out and kept; the cap applied only when read."""
    # Without PIPELINING: Ansible's default way with modules, each copied to the host before it runs.
    start, key = ssh_hosts
    big = tmp_path / "big.sh"  # stands in for a host whose check writes far too much
    big.write_text("#!/bin/sh\nhead -c 5000 /dev/zero | tr '\\0' x\n")
    big.chmod(0o700)
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(f"big-1 ansible_host=127.0.0.1 ansible_port={start()}\n\n[all:vars]\nansible_user=root\n"
                         f"ansible_ssh_private_key_file={key}\nansible_python_interpreter={sys.executable}\n"
                         f"jvmbridge_command='{big}'\njvmbridge_max_document_bytes=4096\n"
                         "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n")
    done = run_cli("fleet", str(inventory), "--out", str(tmp_path / "out"), "--format", "json", timeout=600)
    assert "Traceback" not in done.stderr
    # What --out keeps for the host is fleet's record of why it was not checked, not its document.
    assert "unchecked" in json.loads((tmp_path / "out" / "big-1.json").read_text())
    report = json.loads(done.stdout)
    assert "(5000 bytes) is not a file of at most 4096 bytes: not fetched" in report["unchecked"]["big-1"]
