"""The one door through which jvmbridge starts a process: JVMs, its own Python workers, the C
compiler, javac, openssl, ansible-playbook.

A child inherits what the caller's shell and folder hold, and run as root that hands root to
whoever set them: JAVA_TOOL_OPTIONS loads a -javaagent into every JVM, a `jvmbridge/` in the
current folder replaces jvmbridge in a `python -m` child, a user's folder early on PATH gives gcc
its `as`, ./ansible.cfg configures Ansible. So every child here gets:
- its program by an absolute path its caller checked (:func:`find_program`, trusted_path, a JDK
  discovery accepted); a Python child the interpreter running now, isolated (:func:`python_command`);
- an environment built from an allow-list (:func:`environment`), its PATH the folders only root
  can change when run as root;
- "/" as its working folder, unless its caller has a folder of its own for it.
"""
from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jvmbridge.trust.paths import changeable_by_others, trusted_path

# What a child inherits, as pyperf's create_environ keeps: where things are, the locale, the time
# zone. Nothing that changes what a program loads or runs (JAVA_TOOL_OPTIONS, LD_PRELOAD,
# PYTHONPATH, OPENSSL_CONF, ANSIBLE_CONFIG, CLASSPATH, GCC_EXEC_PREFIX...) unless its caller sets it.
INHERITED = ("HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "XDG_CACHE_HOME",
             "XDG_DATA_HOME",
             "QEMU_CPU")  # under qemu-user, the CPU an emulated child sees: its parent's
INHERITED_PREFIXES = ("LC_",)

# JVM options a shell may carry: JAVA_TOOL_OPTIONS and _JAVA_OPTIONS reach every JVM (JPype's too),
# JDK_JAVA_OPTIONS every `java` launcher. Left out of every child like the rest, and named in a
# comparison's record (environment_left_out): a measured JVM runs with the options it shows.
JVM_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")

# The working folder of a child whose caller gives none: root's, holding nothing a program reads.
WORKING_FOLDER = "/"

# The jvmbridge package this process runs, which its Python children import and nothing else of its
# folder (a checkout's holds tests/, build/...): installed, editable, or on PYTHONPATH alike.
PACKAGE = str(Path(__file__).resolve().parent.parent)
_RUN_MODULE = ("import importlib.util, runpy, sys\n"
               "package = sys.argv.pop(1)\n"
               "spec = importlib.util.spec_from_file_location('jvmbridge', package + '/__init__.py',"
               " submodule_search_locations=[package])\n"
               "sys.modules['jvmbridge'] = module = importlib.util.module_from_spec(spec)\n"
               "spec.loader.exec_module(module)\n"
               "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)\n")


# Set (a -X option of the interpreter) by --trust-jvm-arg (jvm.optionfiles), and so handed on to
# the Python children, which check the JVM options they are given again.
TRUST_JVM_ARGS = "jvmbridge.trust-jvm-arg"


def python_command(module: str, *arguments: str) -> list[str]:
    """``python -m module arguments`` as jvmbridge's children run it: the interpreter running now
    (as its venv has it: not its real path, which would leave the venv), isolated (-I: neither the
    current folder nor a script's on sys.path, no PYTHON* variables, no user site), importing this
    process's jvmbridge (PACKAGE) whatever folder it was started from."""
    trust = ["-X", TRUST_JVM_ARGS] if TRUST_JVM_ARGS in sys._xoptions else []
    return [sys.executable, "-I", *trust, "-c", _RUN_MODULE, PACKAGE, module, *arguments]


def environment(add: Mapping[str, str] | None = None, inherit: Sequence[str] = ()) -> dict[str, str]:
    """A child's environment: this process's INHERITED variables (and ``inherit``, those its caller
    has a reason to pass on), PATH's folders that root alone can change (run as root), and ``add``,
    what the caller sets itself (an OpenSSL mask, ANSIBLE_CONFIG). Run as root, a HOME or TMPDIR
    another user can change is replaced (HOME by root's own) or dropped: gcc keeps its assembly
    between steps in TMPDIR, Ansible loads plugins from ~/.ansible."""
    env = {name: value for name, value in os.environ.items()
           if name in INHERITED or name.startswith(INHERITED_PREFIXES) or name in inherit}
    env["PATH"] = os.pathsep.join(search_path())
    if os.geteuid() == 0:
        # A folder kept is handed on as the real path checked, never as the name (a link) that led there.
        if "HOME" in env:
            env["HOME"] = _root_alone_folder(env["HOME"]) or _root_home()
        if "TMPDIR" in env:
            if scratch := _root_alone_folder(env["TMPDIR"], sticky_ok=True):
                env["TMPDIR"] = scratch
            else:
                del env["TMPDIR"]
    env.update(add or {})
    return env


def settle_scratch_folder() -> None:
    """Run as root, this process's own scratch folders (tempfile: the C loop's build, javac's
    classes, the workers' results) are made where no other user can rename them: $TMPDIR (or
    $TEMP, $TMP) only if :func:`environment` would pass it to a child, else /tmp, /var/tmp or
    root's home. In a user's $TMPDIR, they rename root's folder away and put their own, and what
    root builds there is theirs. Called once, before anything is made."""
    if os.geteuid() != 0:
        return
    named = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    candidates = [folder for folder in named if folder] + ["/tmp", "/var/tmp", _root_home()]
    tempfile.tempdir = next(filter(None, (_root_alone_folder(folder, sticky_ok=True) for folder in candidates[:-1])),
                            candidates[-1])


def _root_home() -> str:
    """Root's home, as the password database says, or /root where it has no entry for root (a
    container's or an emulated root file system)."""
    try:
        return pwd.getpwuid(0).pw_dir
    except KeyError:
        return "/root"


def environment_left_out() -> list[str]:
    """The names of the JVM option variables this process's environment has, which no child gets:
    names alone, as a header and a run file are shared and a value may hold a -D...password=."""
    return [name for name in JVM_OPTION_VARIABLES if name in os.environ]


def search_path() -> list[str]:
    """The folders a child may find programs in by name: PATH's absolute ones (an empty entry is
    the current folder) and, run as root, only those that root alone can change, each as the real
    path checked (a link on the way to it, another user's, could lead elsewhere by the time a child looks)."""
    folders = [folder for folder in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(folder)]
    if os.geteuid() == 0:
        folders = [real for folder in folders if (real := _root_alone_folder(folder)) is not None]
    return list(dict.fromkeys(folders))


def find_program(name: str, what: str) -> Path | None:
    """The checked real path of the program ``name`` (a path, or a name looked up in
    :func:`search_path`), or None where there is none. Run as root, NotTrusted where another user
    can change it or a folder above it."""
    found = shutil.which(name, path=os.pathsep.join(search_path()))  # a path given is taken as it is
    return trusted_path(found, what) if found else None


def launch(command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike = WORKING_FOLDER,
           **options: Any) -> subprocess.Popen:
    """``command`` started, as subprocess.Popen with ``options`` (stdin, stdout, text, pass_fds...):
    ``command[0]`` an absolute path (never looked up by the system), ``env`` :func:`environment`'s
    unless the caller built one from it, in ``cwd``."""
    return subprocess.Popen(_checked(command, options), env=environment() if env is None else dict(env), cwd=cwd,
                            **options)


def run(command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike = WORKING_FOLDER,
        **options: Any) -> subprocess.CompletedProcess:
    """``command`` run to its end, as subprocess.run with ``options`` (capture_output, timeout...),
    started as :func:`launch` starts it."""
    return subprocess.run(_checked(command, options), env=environment() if env is None else dict(env), cwd=cwd,
                          **options)


def _checked(command: Sequence[str], options: Mapping[str, Any]) -> list[str]:
    if not os.path.isabs(command[0]):
        raise ValueError(f"{command[0]}: a program is started by its absolute path, never looked up by name")
    if {"shell", "executable", "preexec_fn"} & options.keys():
        raise ValueError("a program is started as its command says, with no shell, other executable or hook")
    return [os.fspath(word) for word in command]


def _root_alone_folder(folder: str, sticky_ok: bool = False) -> str | None:
    """The real path of ``folder``, resolved once, where no user but root can change that folder and
    those above it (with ``sticky_ok``, a root-owned sticky folder such as /tmp too, where others may
    add entries but not replace root's); None where another can. The caller uses that path, not
    ``folder``, whose links could lead elsewhere by then."""
    real = Path(os.path.realpath(folder))
    try:
        found = os.stat(real)
    except OSError:
        return None
    if not stat.S_ISDIR(found.st_mode):
        return None
    if changeable_by_others(real) is None:
        return str(real)
    sticky = found.st_uid == 0 and bool(found.st_mode & stat.S_ISVTX)
    return str(real) if sticky_ok and sticky and changeable_by_others(real.parent) is None else None
