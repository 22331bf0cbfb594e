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
        java = resolve_java(exe)
    except JvmNotFound:
        raise WorkerError(f"pid {pid}: not a JVM ({exe})") from None
    return LiveJvm(pid, java, b" ".join(arguments).decode(errors="replace").strip())


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
    done = subprocess.run([str(jcmd), str(live.pid), "VM.flags", "-all"], capture_output=True, text=True,
                          errors="replace", timeout=60)
    if done.returncode != 0 or "[Global flags]" not in done.stdout:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise WorkerError(f"pid {live.pid}: attach failed (jcmd VM.flags): {said[-1] if said else 'no output'}")
    return done.stdout
