"""Getting PrintFlagsFinal text: from a JVM we start, or from a running JVM through jcmd."""
from __future__ import annotations

import os
import subprocess
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
    command = [str(java.home / "bin" / "java"), UNLOCK_DIAGNOSTIC, "-XX:+PrintFlagsFinal", *options, "-version"]
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=120)
    if done.returncode != 0:
        said = messages.complaint(done.stdout + "\n" + done.stderr) or f"exit code {done.returncode}"
        raise WorkerError(f"{java.home}: the JVM refused to start: {said}")
    return done.stdout


@dataclass(frozen=True)
class LiveJvm:
    pid: int
    java: JavaInstall
    command_line: str


def live_jvm(pid: int) -> LiveJvm:
    """The running JVM with this pid; WorkerError with one clear line when it is not one."""
    proc = Path(f"/proc/{pid}")
    try:
        exe = os.readlink(proc / "exe")
        command_line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except FileNotFoundError:
        raise WorkerError(f"pid {pid}: no such process") from None
    except PermissionError:
        raise WorkerError(f"pid {pid}: permission denied (run as the JVM's user or root)") from None
    try:
        java = resolve_java(exe)
    except JvmNotFound:
        raise WorkerError(f"pid {pid}: not a JVM ({exe})") from None
    return LiveJvm(pid, java, command_line)


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
        raise WorkerError(f"pid {live.pid}: jcmd could not read its flags: {said[-1] if said else 'no output'}")
    return done.stdout
