"""Run as root, what jvmbridge starts takes nothing from the caller's folder, PATH or environment
that another user can plant: their `jvmbridge/` package in the current folder, their `as` early on
PATH, their ./ansible.cfg, their -javaagent in JAVA_TOOL_OPTIONS (jvmbridge.trust.launch).

Split by tier: here what needs a JVM, the compiler or Ansible; the rest is in tests/unit/test_launch.py."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import TENANT, agent_jar, cannot, jdk_homes

from jvmbridge.native import c_loop

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the doors are root's")

# jvmbridge as a user runs it: its console script, whose folder (not the current one) starts sys.path.
JVMBRIDGE = Path(sys.executable).parent / "jvmbridge"


def _as_a_user_runs_it(*args: str, cwd: Path, env: dict | None = None, timeout: float = 300
                       ) -> subprocess.CompletedProcess:
    if not JVMBRIDGE.is_file():
        cannot(f"needs jvmbridge's console script beside {sys.executable}: pip install .")
    return subprocess.run([str(JVMBRIDGE), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**(env or os.environ), "PYTHONUNBUFFERED": "1"})


def _theirs(folder: Path) -> None:
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder)], check=True)


def test_root_in_a_users_folder_runs_jvmbridge_not_their_jvmbridge_package(folder, tmp_path):
    marker = folder / "ran-as"
    (folder / "jvmbridge").mkdir()
    (folder / "jvmbridge" / "__init__.py").write_text(
        f"import os\nopen({str(marker)!r}, 'a').write(f'{{os.getuid()}}\\n')\n")
    _theirs(folder)
    done = _as_a_user_runs_it("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--sizes", "16",
                              "--round-time", "0.05", "--rounds", "2", "--forks", "1", "--max-forks", "1", "--quiet",
                              "--format", "json", "-o", str(tmp_path / "run.jsonl"), cwd=folder)
    assert not marker.exists(), f"their package ran as uid {marker.read_text()}"
    assert done.returncode == 0, done.stderr
    assert {row["engine"] for row in json.loads(done.stdout)["results"]} == {"OpenSSL C loop (jvmbridge)"}


def test_gcc_building_the_c_loop_as_root_runs_no_program_of_a_users_folder_on_path(folder, tmp_path, monkeypatch):
    marker = folder / "ran-as"
    for tool in ("as", "ld", "collect2"):
        (folder / tool).write_text(f'#!/bin/sh\nid -u >> {marker}\nexec /usr/bin/{tool} "$@"\n')
        (folder / tool).chmod(0o755)
    _theirs(folder)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # a cache of its own: the loop is built now
    built = c_loop.library_path()
    assert not marker.exists(), f"their program ran as uid {marker.read_text()}"
    assert built.parent == tmp_path / "jvmbridge"
    assert c_loop.load(built).aesloop_openssl_version()


def test_root_makes_no_scratch_folder_in_a_users_tmpdir_and_caches_the_c_loop_0600_under_umask_000(folder, tmp_path):
    # Their TMPDIR: they rename root's build folder away, put theirs at its name, and their library
    # went into root's cache. Under umask 000 the cache's folders and library were everyone's.
    _theirs(folder)
    made: set[str] = set()
    stop = threading.Event()

    def watch() -> None:  # what the user sees appear in their folder, as their watcher would
        while not stop.is_set():
            made.update(os.listdir(folder))
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    cache = tmp_path / "new" / "cache"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jvmbridge", "compare", "--no-interleave", "--shape", "message", "--engine",
             "c-loop", "--sizes", "16", "--round-time", "0.05", "--rounds", "2", "--forks", "1", "--max-forks", "1",
             "--quiet", "--format", "json", "-o", str(tmp_path / "run.jsonl")],
            capture_output=True, text=True, timeout=300, umask=0,
            env={**os.environ, "TMPDIR": str(folder), "XDG_CACHE_HOME": str(cache), "PYTHONUNBUFFERED": "1"})
    finally:
        stop.set()
        watcher.join()
    assert done.returncode == 0, done.stderr
    assert made == set(), f"root made {sorted(made)} in their TMPDIR"
    [library] = (cache / "jvmbridge").glob("aesloop-*.so")
    assert {oct(path.stat().st_mode & 0o777) for path in (tmp_path / "new", cache, cache / "jvmbridge")} == {"0o700"}
    assert (library.stat().st_uid, library.stat().st_mode & 0o777, library.stat().st_nlink) == (0, 0o600, 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("named", [False, True], ids=["./ansible.cfg", "ANSIBLE_CONFIG"])
def test_the_fleet_play_reads_no_ansible_cfg_of_the_callers_folder_or_environment(folder, tmp_path, named):
    # ansible-playbook as the venv that runs these tests has it, as an activated venv would find it.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    if not shutil.which("ansible-playbook", path=path):
        cannot("needs ansible-playbook: pip install '.[fleet]'")
    (folder / "ansible.cfg").write_text(f"[defaults]\nlog_path = {folder / 'here.log'}\n")
    (folder / "chosen.cfg").write_text(f"[defaults]\nlog_path = {folder / 'chosen.log'}\n")
    _theirs(folder)
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(f"gone-1 ansible_host=127.0.0.1 ansible_port={_free_port()}\n")  # nothing listens there
    done = _as_a_user_runs_it("fleet", str(inventory), "--out", str(tmp_path / "fleet"), "--format", "json",
                              cwd=folder, env={**os.environ, "PATH": path,
                                               **({"ANSIBLE_CONFIG": str(folder / "chosen.cfg")} if named else {})})
    assert sorted(path.name for path in folder.iterdir()) == ["ansible.cfg", "chosen.cfg"]  # no log of theirs written
    assert json.loads(done.stdout)["unchecked"].keys() == {"gone-1"}, done.stderr[-2000:]


@pytest.mark.parametrize("planted", ["inventory", "group_vars", "extra-vars", "wheel"])
def test_a_fleet_inventory_or_file_another_user_can_change_runs_nothing_as_root(folder, tmp_path, planted):
    # The inventory is code: ansible_python_interpreter= (and lookups, ProxyCommand) run on the
    # controller, as root. So are group_vars/ beside it, -e @vars.yml, and the wheel every host runs.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    if not shutil.which("ansible-playbook", path=path):
        cannot("needs ansible-playbook: pip install '.[fleet]'")
    marker = folder / "ran-as"
    (folder / "py.sh").write_text(f'#!/bin/sh\nid -u >> {marker}\nexec {shlex.quote(sys.executable)} "$@"\n')
    (folder / "py.sh").chmod(0o755)
    code = f"ansible_python_interpreter={folder / 'py.sh'}"
    ours = tmp_path / "inventory"
    ours.mkdir()
    (ours / "hosts.ini").write_text("localhost ansible_connection=local\n")
    inventory, extra = ours / "hosts.ini", []
    if planted == "inventory":
        inventory = folder / "hosts.ini"
        inventory.write_text(f"localhost ansible_connection=local {code}\n")
    elif planted == "group_vars":  # root's inventory, in root's folder, beside their group_vars/
        (ours / "group_vars").mkdir()
        (ours / "group_vars" / "all.yml").write_text(code.replace("=", ": ") + "\n")
        _theirs(ours / "group_vars")
    elif planted == "extra-vars":
        (folder / "vars.yml").write_text(code.replace("=", ": ") + "\n")
        extra = ["-e", f"@{folder / 'vars.yml'}"]
    else:
        (folder / "jvmbridge-0-py3-none-any.whl").write_bytes(b"")
        extra = ["--wheel", str(folder / "jvmbridge-0-py3-none-any.whl")]
    _theirs(folder)
    done = _as_a_user_runs_it("fleet", str(inventory), "--out", str(tmp_path / "fleet"), *extra, cwd=tmp_path,
                              env={**os.environ, "PATH": path}, timeout=120)
    assert not marker.exists(), f"their interpreter ran as uid {marker.read_text()}"
    assert done.returncode == 1 and done.stdout == "", done.stdout
    assert f"is owned by uid {TENANT}, so root will not run it; copy it where only root can change it" in done.stderr


@pytest.mark.parametrize("command", [
    ("flags", "--format", "json"),
    ("check", "--mode", "cbc", "--no-verify", "--mode-time", "5", "--format", "json"),
    ("verify", "--mode", "cbc", "--quick", "--jdk-time", "1", "--quiet", "--format", "json"),
], ids=lambda command: command[0])
def test_no_jvm_root_starts_loads_a_javaagent_from_its_shells_java_tool_options(folder, tmp_path, command):
    marker = folder / "ran-as"
    jar = agent_jar(folder, marker)
    _theirs(folder)
    env = {**os.environ, "JAVA_TOOL_OPTIONS": f"-javaagent:{jar}", "_JAVA_OPTIONS": f"-javaagent:{jar}",
           "JDK_JAVA_OPTIONS": f"-javaagent:{jar}"}
    done = _as_a_user_runs_it(*command, "--java", str(jdk_homes()[0]), cwd=tmp_path, env=env)
    assert not marker.exists(), f"their agent ran as {marker.read_text()}"
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: a finding, not a failure to run
    assert json.loads(done.stdout)
