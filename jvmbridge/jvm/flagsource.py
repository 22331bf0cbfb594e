"""Getting PrintFlagsFinal text: from a JVM we start, or from a running JVM through jcmd."""
from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.child import WorkerError
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall, JvmNotFound, resolve_java
from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC


def print_flags_final(java: JavaInstall, options: list[str] | tuple[str, ...] = ()) -> str:
    """`java -XX:+UnlockDiagnosticVMOptions -XX:+PrintFlagsFinal OPTIONS -version`'s flag listing.

    The unlock comes first so diagnostic flags (UseAESIntrinsics, ...) are listed and can be set.
    """
    return flags_and_warnings(java, options)[0]


def flags_and_warnings(java: JavaInstall, options: list[str] | tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """:func:`print_flags_final`'s listing and the warnings the JVM printed about the options."""
    command = [str(java.home / "bin" / "java"), UNLOCK_DIAGNOSTIC, "-XX:+PrintFlagsFinal", *options, "-version"]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=120)
    if done.returncode != 0:
        said = messages.complaint(done.stdout + "\n" + done.stderr) or f"exit code {done.returncode}"
        raise WorkerError(f"{java.home}: the JVM refused to start: {said}")
    return done.stdout, messages.warnings(done.stdout + "\n" + done.stderr)


@dataclass(frozen=True)
class LiveJvm:
    pid: int
    java: JavaInstall
    command_line: str


def live_jvm(pid: int) -> LiveJvm:
    """The running JVM with this pid; WorkerError with one clear line when it is not one: gone,
    not a JVM, or a JVM this user may not inspect."""
    proc = Path(f"/proc/{pid}")
    try:
        # The command line is anyone's to read; the executable's link only the owner's (and root's).
        arguments = (proc / "cmdline").read_bytes().split(b"\0")
        exe = os.readlink(proc / "exe")
    except FileNotFoundError:
        raise WorkerError(f"pid {pid}: no such process") from None
    except PermissionError:
        raise WorkerError(unreadable(pid, arguments[0].decode(errors="replace"), _owner(proc), os.geteuid(),
                                     _has_perf_data(pid))) from None
    try:
        java = _java_of(proc, exe)
    except JvmNotFound:
        raise WorkerError(f"pid {pid}: not a JVM ({exe})") from None
    return LiveJvm(pid, java, b" ".join(arguments).decode(errors="replace").strip())


def _java_of(proc: Path, exe: str) -> JavaInstall:
    """The JVM the process runs. One in a container runs a file of its own root, which
    /proc/PID/root shows to the host (as jcmd itself reaches the container's /tmp); its exe link
    reads as a path in that root, or under the root's own path where that is visible here."""
    if not _other_mount_namespace(proc):
        return resolve_java(exe)
    try:
        root = os.readlink(proc / "root")
    except OSError:
        return resolve_java(exe)
    inside = exe[len(root.rstrip("/")):] if root != "/" and exe.startswith(root.rstrip("/") + "/") else exe
    return resolve_java(inside, root=proc / "root")


def _jcmd_for(live: LiveJvm) -> list[str]:
    """``jcmd PID`` as the JVM's own jcmd; for a JVM in a container, run inside its mount and PID
    namespaces (nsenter, as root) with the pid it has there: the container's jcmd cannot start from
    the host's side, where its libraries' paths mean something else."""
    proc_root = f"/proc/{live.pid}/root"
    home = str(live.java.home)
    if not home.startswith(proc_root + "/"):
        return [str(live.java.home / "bin" / "jcmd"), str(live.pid)]
    return ["nsenter", "--target", str(live.pid), "--mount", "--pid", "--root", "--wd", "--",
            f"{home[len(proc_root):]}/bin/jcmd", str(_pid_inside(live.pid))]


def _pid_inside(pid: int) -> int:
    """The pid the process has in its own (innermost) PID namespace, from /proc/PID/status NSpid."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("NSpid:"):
            return int(line.split()[-1])
    return pid


def _other_mount_namespace(proc: Path) -> bool:
    try:
        return os.readlink(proc / "ns" / "mnt") != os.readlink("/proc/self/ns/mnt")
    except OSError:
        return False


def unreadable(pid: int, program: str, owner: int | None, euid: int, perf_data: bool) -> str:
    """Why a process whose executable cannot be read cannot be checked, from what can be seen:
    its program name and HotSpot's per-process perf data file say whether it is a JVM at all."""
    if not (perf_data or Path(program).name.startswith("java")):
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
    """HotSpot writes /tmp/hsperfdata_<user>/<pid> unless -XX:-UsePerfData: a JVM's mark."""
    return any(Path(tempfile.gettempdir()).glob(f"hsperfdata_*/{pid}"))


def all_live_jvms() -> list[LiveJvm]:
    """Every process on this host whose executable is a JVM's launcher."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                found.append(live_jvm(int(entry.name)))
            except WorkerError:
                continue
    return sorted(found, key=lambda live: live.pid)


def live_flags(live: LiveJvm) -> str:
    """`jcmd PID VM.flags -all`, with the JVM's own jcmd (the attach protocol is version-bound)."""
    jcmd = live.java.home / "bin" / "jcmd"
    if not jcmd.is_file():
        raise WorkerError(f"pid {live.pid}: {live.java.home} has no jcmd (a JRE?); cannot read its flags")
    done = subprocess.run([*_jcmd_for(live), "VM.flags", "-all"], capture_output=True, text=True,
                          errors="replace", timeout=60)
    if done.returncode != 0 or "[Global flags]" not in done.stdout:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        inside = ("; it runs in a container: run `jvmbridge check --all-jvms` inside it (e.g. docker exec)"
                  if _other_mount_namespace(Path(f"/proc/{live.pid}")) else "")
        raise WorkerError(f"pid {live.pid}: attach failed (jcmd VM.flags): {said[-1] if said else 'no output'}{inside}")
    return done.stdout
