"""The launcher (jvmbridge.trust.launch) is the one door for every process jvmbridge starts: what a
child gets of this process's environment, its PATH, its program, and that no other module starts one.

Split by tier: here what needs no JVM, OpenSSL, compiler or Ansible; the rest is in
tests/integration/test_launch.py."""
from __future__ import annotations

import ast
import os
import sys

import pytest
from helpers import REPO, TENANT

from jvmbridge.trust import launch
from jvmbridge.trust.launch import environment, find_program, python_command, run, search_path

# What starts a program, module by module: a call of one of these, or an import of one by name.
_STARTERS = {"subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
             "asyncio": {"create_subprocess_exec", "create_subprocess_shell"}, "pty": {"spawn", "fork"}}


def _starts_a_process(module: str, name: str) -> bool:
    if module == "os":
        return name.startswith(("exec", "spawn", "posix_spawn")) or name in ("system", "popen")
    return name in _STARTERS.get(module, ())


def _doors(source: str) -> list[str]:
    """Where ``source`` starts a process other than through the launcher (line: what)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and _starts_a_process(owner.id, node.func.attr):
                found.append(f"{node.lineno}: {owner.id}.{node.func.attr}")
            # multiprocessing's spawn and forkserver start `python` as it likes (not isolated)
            if node.func.attr in ("get_context", "set_start_method") and any(
                    isinstance(arg, ast.Constant) and arg.value in ("spawn", "forkserver") for arg in node.args):
                found.append(f"{node.lineno}: multiprocessing {node.func.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [f"{node.lineno}: from {node.module} import {alias.name}" for alias in node.names
                      if _starts_a_process(node.module, alias.name)]
        elif isinstance(node, ast.Import):  # a module under another name would hide its calls
            found += [f"{node.lineno}: import {alias.name} as {alias.asname}" for alias in node.names
                      if alias.name in ("subprocess", "os", *_STARTERS) and alias.asname]
    return found


def test_the_launcher_is_the_only_module_that_starts_a_process():
    package = REPO / "jvmbridge"
    doors = {str(path.relative_to(package)): found for path in sorted(package.rglob("*.py"))
             if (found := _doors(path.read_text()))}
    assert doors.keys() == {"trust/launch.py"}, doors
    # The check sees what it looks for (a test that cannot fail proves nothing).
    assert _doors("import subprocess\nsubprocess.run(['x'])\nos.execv('x', [])\n") == [
        "2: subprocess.run", "3: os.execv"]
    assert _doors("from subprocess import Popen\nimport subprocess as s\nmp.get_context('spawn')\n") == [
        "1: from subprocess import Popen", "2: import subprocess as s", "3: multiprocessing get_context"]


def test_a_child_gets_the_allowed_variables_and_what_its_caller_sets_nothing_else(monkeypatch):
    shell = {"LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "UTC", "JAVA_TOOL_OPTIONS": "-javaagent:/tmp/a.jar",
             "_JAVA_OPTIONS": "-Xmx1g", "JDK_JAVA_OPTIONS": "-Dx=1", "CLASSPATH": "/tmp", "LD_PRELOAD": "/tmp/x.so",
             "LD_LIBRARY_PATH": "/tmp", "PYTHONPATH": "/tmp", "PYTHONSTARTUP": "/tmp/x.py", "OPENSSL_CONF": "/tmp/c",
             "OPENSSL_ia32cap": "~0", "ANSIBLE_CONFIG": "/tmp/ansible.cfg", "GCC_EXEC_PREFIX": "/tmp/",
             "SSH_AUTH_SOCK": "/tmp/agent"}
    for name, value in shell.items():
        monkeypatch.setenv(name, value)
    env = environment({"OPENSSL_ia32cap": "~0x200000200000000"})
    assert {name: env[name] for name in ("LANG", "LC_TIME", "TZ")} == {"LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "UTC"}
    assert not {name for name in shell if name not in ("LANG", "LC_TIME", "TZ", "OPENSSL_ia32cap")} & env.keys()
    assert env["OPENSSL_ia32cap"] == "~0x200000200000000"  # what jvmbridge sets, not what the shell had
    assert environment(inherit=("SSH_AUTH_SOCK",))["SSH_AUTH_SOCK"] == "/tmp/agent"
    # Their names alone: a header and a run file are shared, and a value may hold a password.
    assert launch.environment_left_out() == ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"]


def test_a_program_is_started_by_its_absolute_path_in_the_launchers_folder(tmp_path):
    with pytest.raises(ValueError, match="absolute path"):
        run(["python3", "-c", "pass"])
    with pytest.raises(ValueError, match="no shell"):
        run([sys.executable, "-c", "pass"], shell=True)
    said = run([sys.executable, "-c", "import os; print(os.getcwd())"], capture_output=True, text=True)
    assert said.stdout.strip() == "/"


def test_a_python_child_runs_this_jvmbridge_whatever_the_current_folder_and_environment_hold(tmp_path, monkeypatch):
    planted = tmp_path / "jvmbridge"
    planted.mkdir()
    marker = tmp_path / "ran"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('theirs')\n")
    (tmp_path / "site.py").write_text(f"open({str(marker)!r}, 'w').write('site')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    said = run(python_command("jvmbridge.trust.paths"), cwd=tmp_path, env={**os.environ}, capture_output=True, text=True)
    assert said.returncode == 0, said.stderr
    assert not marker.exists(), marker.read_text()
    shown = run([*python_command("json.tool"), "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert shown.returncode == 0 and not marker.exists()
    assert python_command("m", "a")[:2] == [sys.executable, "-I"] and python_command("m", "a")[-2:] == ["m", "a"]


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")


@needs_root
def test_run_as_root_a_childs_path_holds_only_folders_root_alone_can_change(folder, monkeypatch):
    theirs, ours = folder / "theirs", folder / "ours"
    for made in (theirs, ours):
        made.mkdir()
        (made / "cc").write_text("#!/bin/sh\n")
        (made / "cc").chmod(0o755)
    os.chown(theirs, TENANT, TENANT)
    monkeypatch.setenv("PATH", os.pathsep.join([str(theirs), "", "relative", str(ours), "/usr/bin"]))
    assert search_path() == [str(ours), "/usr/bin"]
    assert environment()["PATH"] == f"{ours}:/usr/bin"
    assert find_program("cc", "the C compiler") == ours / "cc"  # their cc, first on PATH, is passed over
    monkeypatch.setenv("HOME", str(theirs))
    monkeypatch.setenv("TMPDIR", str(theirs))
    env = environment()
    assert env["HOME"] == "/root" and "TMPDIR" not in env  # their ~/.ansible, their gcc temporaries: not root's
    monkeypatch.setenv("TMPDIR", "/tmp")  # a root-owned sticky folder: others cannot replace root's files there
    assert environment()["TMPDIR"] == "/tmp"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root's children get the checked path")
def test_a_folder_kept_for_a_child_is_the_real_path_checked_not_the_link_named(tmp_path, monkeypatch):
    # A child handed the link's name would follow it again, wherever it points by then: TMPDIR, HOME and PATH's.
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv("TMPDIR", str(link))
    monkeypatch.setenv("HOME", str(link))
    monkeypatch.setenv("PATH", os.pathsep.join([str(link), "/usr/bin"]))
    env = environment()
    assert env["TMPDIR"] == str(real) and env["HOME"] == str(real)
    assert search_path() == [str(real), "/usr/bin"] and env["PATH"] == f"{real}:/usr/bin"
