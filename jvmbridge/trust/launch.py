"""The one door through which jvmbridge starts a process.

Run as root, what a child inherits hands root to whoever set it: JAVA_TOOL_OPTIONS loads an agent,
a `jvmbridge/` in the cwd replaces ours in `python -m`, a user's PATH folder gives gcc its `as`,
./ansible.cfg configures Ansible. So a child gets a checked absolute program path (Python: this
interpreter, isolated), an allow-listed environment with root-only PATH folders, and "/" as cwd.
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

# As pyperf's create_environ: where things are, locale, time zone; nothing that changes what a
# program loads (JAVA_TOOL_OPTIONS, LD_PRELOAD, PYTHONPATH, OPENSSL_CONF...) unless a caller sets it.
INHERITED = ("HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "XDG_CACHE_HOME",
             "XDG_DATA_HOME",
             "QEMU_CPU")  # under qemu-user, the CPU an emulated child sees: its parent's
INHERITED_PREFIXES = ("LC_",)

# Left out of every child, and named in a comparison's record: a measured JVM runs with the options
# it shows.
JVM_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")

# Root's: holding nothing a program reads.
WORKING_FOLDER = "/"

# Only this package is imported by the Python children, not the rest of its folder (tests/, build/).
PACKAGE = str(Path(__file__).resolve().parent.parent)
_RUN_MODULE = ("import importlib.util, runpy, sys\n"
               "package = sys.argv.pop(1)\n"
               "spec = importlib.util.spec_from_file_location('jvmbridge', package + '/__init__.py',"
               " submodule_search_locations=[package])\n"
               "sys.modules['jvmbridge'] = module = importlib.util.module_from_spec(spec)\n"
               "spec.loader.exec_module(module)\n"
               "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)\n")


# Set by --trust-jvm-arg and handed to the Python children, which check JVM options again.
TRUST_JVM_ARGS = "jvmbridge.trust-jvm-arg"


def python_command(module: str, *arguments: str) -> list[str]:
    """``python -m module`` as children run it: this interpreter as its venv has it, isolated (-I: no
    cwd or script folder on sys.path, no PYTHON* variables, no user site), importing PACKAGE."""
    trust = ["-X", TRUST_JVM_ARGS] if TRUST_JVM_ARGS in sys._xoptions else []
    return [sys.executable, "-I", *trust, "-c", _RUN_MODULE, PACKAGE, module, *arguments]


def environment(add: Mapping[str, str] | None = None, inherit: Sequence[str] = ()) -> dict[str, str]:
    """A child's environment: INHERITED (plus ``inherit``), PATH folders root alone can change (as
    root), and ``add``. As root, a HOME or TMPDIR another user can change is replaced or dropped:
    gcc keeps its assembly in TMPDIR, Ansible loads plugins from ~/.ansible."""
    env = {name: value for name, value in os.environ.items()
           if name in INHERITED or name.startswith(INHERITED_PREFIXES) or name in inherit}
    env["PATH"] = os.pathsep.join(search_path())
    if os.geteuid() == 0:
        # Handed on as the real path checked, never the name (a link) that led there.
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
    """As root, make scratch folders where no other user can rename them: $TMPDIR only if
    :func:`environment` would pass it on, else /tmp, /var/tmp or root's home (in a user's $TMPDIR
    they could swap root's folder for theirs). Called once, before anything is made."""
    if os.geteuid() != 0:
        return
    named = [os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")]
    candidates = [folder for folder in named if folder] + ["/tmp", "/var/tmp", _root_home()]
    tempfile.tempdir = next(filter(None, (_root_alone_folder(folder, sticky_ok=True) for folder in candidates[:-1])),
                            candidates[-1])


def _root_home() -> str:
    """Root's home from the password database, else /root."""
    try:
        return pwd.getpwuid(0).pw_dir
    except KeyError:
        return "/root"


def environment_left_out() -> list[str]:
    """Names (never values: a -D...password=) of the JVM option variables present, which no child gets."""
    return [name for name in JVM_OPTION_VARIABLES if name in os.environ]


def search_path() -> list[str]:
    """PATH's absolute folders (an empty entry is the cwd) and, as root, only those root alone can
    change, each as its checked real path (a link on the way could be repointed)."""
    folders = [folder for folder in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(folder)]
    if os.geteuid() == 0:
        folders = [real for folder in folders if (real := _root_alone_folder(folder)) is not None]
    return list(dict.fromkeys(folders))


def find_program(name: str, what: str) -> Path | None:
    """The checked real path of program ``name``, or None; as root, NotTrusted if others can change it."""
    found = shutil.which(name, path=os.pathsep.join(search_path()))  # a path given is taken as it is
    return trusted_path(found, what) if found else None


def launch(command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike = WORKING_FOLDER,
           **options: Any) -> subprocess.Popen:
    """``command`` started as by Popen: ``command[0]`` absolute, ``env`` from :func:`environment`."""
    return subprocess.Popen(_checked(command, options), env=environment() if env is None else dict(env), cwd=cwd,
                            **options)


def run(command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike = WORKING_FOLDER,
        **options: Any) -> subprocess.CompletedProcess:
    """``command`` run to its end as by subprocess.run, started as :func:`launch` does."""
    return subprocess.run(_checked(command, options), env=environment() if env is None else dict(env), cwd=cwd,
                          **options)


def _checked(command: Sequence[str], options: Mapping[str, Any]) -> list[str]:
    if not os.path.isabs(command[0]):
        raise ValueError(f"{command[0]}: a program is started by its absolute path, never looked up by name")
    if {"shell", "executable", "preexec_fn"} & options.keys():
        raise ValueError("a program is started as its command says, with no shell, other executable or hook")
    return [os.fspath(word) for word in command]


def _root_alone_folder(folder: str, sticky_ok: bool = False) -> str | None:
    """The real path of ``folder`` where only root can change it and the folders above (``sticky_ok``:
    a root-owned sticky /tmp too); None otherwise. Callers use that path: links could move."""
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
