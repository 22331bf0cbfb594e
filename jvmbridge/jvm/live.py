"""Running JVMs: which processes are JVMs, their JDK and flags, read through HotSpot's attach
socket. Nothing of the JVM's installation is run (its jcmd may be anyone's program); each JVM is
followed by its pidfd (jvm.process), so a pid taken over meanwhile is left alone."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.forks.parent import WorkerError
from jvmbridge.jvm.attach import AttachError, jcmd
from jvmbridge.jvm.discovery import JavaInstall, JvmNotFound, UnreadableRelease, resolve_java
from jvmbridge.jvm.process import ProcessChanged, TrackedProcess

# The kernel's mark of a file removed or replaced since loaded (a JDK upgrade under a running JVM).
DELETED = " (deleted)"
# One reply's limit (a scan gives each JVM at most what is left of its budget).
ATTACH_SECONDS = 30.0


@dataclass(frozen=True)
class LiveJvm:
    process: TrackedProcess
    java: JavaInstall
    command_line: str  # its arguments joined by spaces, for people
    arguments: tuple[str, ...] = ()  # as the kernel gives them (/proc/PID/cmdline, NUL-separated): what it runs
    jdk_deleted: bool = False  # its java (and libjvm) were removed or replaced since it started

    @property
    def pid(self) -> int:
        return self.process.pid


class UncheckableJvm(WorkerError):
    """A process that is a JVM, but whose JDK cannot be read: checked no further, said why."""

    def __init__(self, pid: int, reason: str):
        super().__init__(f"pid {pid}: {reason}")
        self.pid = pid


def live_jvm(pid: int) -> LiveJvm:
    """The running JVM with this pid; a one-line WorkerError when gone, not a JVM or not ours to see."""
    try:
        process = TrackedProcess(pid)
    except (OSError, ProcessChanged):
        raise NotAJvm(f"pid {pid}: no such process") from None
    try:
        found = _found(process)
        process.ensure_same()  # all that was read through /proc/PID was the found process's
    except ProcessChanged as e:
        process.close()
        raise NotAJvm(str(e)) from None
    except BaseException:
        process.close()
        raise
    return found


def _found(process: TrackedProcess) -> LiveJvm:
    pid, proc = process.pid, Path(f"/proc/{process.pid}")
    try:
        # The command line is anyone's to read; the exe link only the owner's and root's.
        arguments = (proc / "cmdline").read_bytes().removesuffix(b"\0").split(b"\0")
        exe = os.readlink(proc / "exe")
    except FileNotFoundError:
        raise NotAJvm(f"pid {pid}: no such process") from None
    except PermissionError:
        program, perf_data = arguments[0].decode(errors="replace"), _has_perf_data(pid)
        kind = WorkerError if _looks_like_a_jvm(program, perf_data) else NotAJvm
        raise kind(unreadable(pid, program, _owner(proc), os.geteuid(), perf_data)) from None
    argv = tuple(argument.decode(errors="replace") for argument in arguments)
    command_line = " ".join(argv).strip()
    if exe.endswith(DELETED):
        return LiveJvm(process=process, java=_deleted_java_of(proc, exe), command_line=command_line, arguments=argv,
                       jdk_deleted=True)
    try:
        java = _java_of(proc, exe)
    except UnreadableRelease as e:
        raise UncheckableJvm(pid, str(e)) from None
    except JvmNotFound:
        raise NotAJvm(f"pid {pid}: not a JVM ({exe})") from None
    return LiveJvm(process=process, java=java, command_line=command_line, arguments=argv)


def _java_of(proc: Path, exe: str) -> JavaInstall:
    """The JVM the process runs; in a container, its exe is a path in its root (/proc/PID/root)."""
    root, inside = _in_its_root(proc, exe)
    return resolve_java(inside) if root is None else resolve_java(inside, root=root)


def _in_its_root(proc: Path, path: str) -> tuple[Path | None, str]:
    """(None, path) on this host's root, else (the process's root, the path inside it)."""
    if not _other_mount_namespace(proc):
        return None, path
    try:
        root = os.readlink(proc / "root")
    except OSError:
        return None, path
    inside = path[len(root.rstrip("/")):] if root != "/" and path.startswith(root.rstrip("/") + "/") else path
    return proc / "root", inside


def _deleted_java_of(proc: Path, exe: str) -> JavaInstall:
    """The JVM of a process whose java file is gone (upgraded): a JVM if libjvm is mapped. Its JDK's
    files are no longer what it runs, so its version comes from the JVM (VM.version)."""
    libjvm = _mapped_libjvm(proc)
    if libjvm is None:
        raise NotAJvm(f"pid {proc.name}: not a JVM ({exe}, no libjvm mapped)")
    java = Path(_as_seen_here(proc, exe.removesuffix(DELETED)))
    return JavaInstall(home=java.parent.parent, libjvm=Path(_as_seen_here(proc, libjvm)), release_version="unknown")


def _as_seen_here(proc: Path, path: str) -> str:
    """A path the kernel shows for the process, as a path on this host (through /proc/PID/root)."""
    root, inside = _in_its_root(proc, path)
    return path if root is None else f"{root}/{inside.lstrip('/')}"


def _mapped_libjvm(proc: Path) -> str | None:
    """The path of the libjvm.so the process has mapped (as the kernel shows it), or None."""
    try:
        with open(proc / "maps", "rb") as maps:  # the kernel's text: one line per mapping, each short
            for line in maps:
                fields = line.rstrip(b"\n").split(maxsplit=5)
                path = fields[5].decode(errors="replace").removesuffix(DELETED) if len(fields) == 6 else ""
                if Path(path).name == "libjvm.so":
                    return path
    except OSError:  # gone meanwhile
        pass
    return None


def _other_mount_namespace(proc: Path) -> bool:
    try:
        return os.readlink(proc / "ns" / "mnt") != os.readlink("/proc/self/ns/mnt")
    except OSError:
        return False


class NotAJvm(WorkerError):
    """The pid names no process, or one that is not a JVM: bad input rather than a finding."""


def _looks_like_a_jvm(program: str, perf_data: bool) -> bool:
    return perf_data or Path(program).name.startswith("java")


def unreadable(pid: int, program: str, owner: int | None, euid: int, perf_data: bool) -> str:
    """Why an unreadable process cannot be checked, from its name and HotSpot's perf data file."""
    if not _looks_like_a_jvm(program, perf_data):
        return f"pid {pid}: not a JVM ({program or 'no command line'})"
    if euid != 0:
        return f"pid {pid}: a JVM this user may not inspect (owned by uid {owner}): run as that user or root"
    return (f"pid {pid}: a JVM the kernel hides even from root (another PID namespace or ptrace rules): "
            "run `jvmbridge check --all-jvms` where it runs, e.g. inside its container")


def _owner(proc: Path) -> int | None:
    try:
        return proc.stat().st_uid
    except OSError:
        return None


def _has_perf_data(pid: int) -> bool:
    """HotSpot's /tmp/hsperfdata_<user>/<pid> (unless -XX:-UsePerfData; /tmp whatever TMPDIR says)."""
    return any(Path("/tmp").glob(f"hsperfdata_*/{pid}"))


def all_live_jvms() -> list[LiveJvm | UncheckableJvm]:
    """Every process whose executable is (or was) a JVM launcher and this user may inspect."""
    found: list[LiveJvm | UncheckableJvm] = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                found.append(live_jvm(int(entry.name)))
            except UncheckableJvm as e:
                found.append(e)
            except WorkerError:
                continue
    return sorted(found, key=lambda live: live.pid)


def live_flags(live: LiveJvm, timeout: float = ATTACH_SECONDS) -> str:
    """What `jcmd PID VM.flags -all` prints, read over the JVM's attach socket."""
    listing = _ask(live.process, "VM.flags -all", timeout)
    if "[Global flags]" not in listing:
        said = listing.strip().splitlines()
        raise WorkerError(f"pid {live.pid}: attach failed (VM.flags): {said[-1] if said else 'no output'}")
    return listing


def live_version(live: LiveJvm, timeout: float = ATTACH_SECONDS) -> str:
    """The JDK version the JVM reports (VM.version), "unknown" if none. Never the release file: root
    would read it through the process's own mounts, where a user can bind a file only root may read."""
    said = _ask(live.process, "VM.version", timeout).splitlines()
    return next((line[4:].strip() for line in said if line.startswith("JDK ")), "unknown")


def live_property(process: int | TrackedProcess, name: str, timeout: float = ATTACH_SECONDS) -> str | None:
    """A system property of the running JVM (VM.system_properties, the JVM's own listing), or None."""
    listing = _ask(process, "VM.system_properties", timeout)
    for line in listing.splitlines():
        key, separator, value = _unescaped(line).partition("=")
        if separator and key == name:
            return value
    return None


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescaped(line: str) -> str:
    """A line of java.util.Properties' store format with its escapes (\\:, \\=, \\uXXXX) read."""
    def one(found: re.Match) -> str:
        code = found.group(1)
        return chr(int(code[1:], 16)) if len(code) == 5 and code[0] == "u" else _ESCAPES.get(code, code)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", one, line)


def _ask(process: int | TrackedProcess, command: str, timeout: float) -> str:
    pid = process if isinstance(process, int) else process.pid
    try:
        return jcmd(process, command, timeout)
    except (AttachError, OSError) as e:
        raise WorkerError(f"pid {pid}: attach failed ({command.split()[0]}): {e}") from None
