"""PrintFlagsFinal text from a JVM we start (a running JVM's: jvmbridge.jvm.live)."""
from __future__ import annotations

from jvmbridge.forks.parent import WorkerError
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC
from jvmbridge.trust.launch import run


def print_flags_final(java: JavaInstall, options: list[str] | tuple[str, ...] = ()) -> str:
    """`java -XX:+UnlockDiagnosticVMOptions -XX:+PrintFlagsFinal OPTIONS -version`'s listing; the
    unlock first, so diagnostic flags (UseAESIntrinsics) are listed and settable."""
    return flags_and_warnings(java, options)[0]


def flags_and_warnings(java: JavaInstall, options: list[str] | tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """:func:`print_flags_final`'s listing and the warnings the JVM printed about the options."""
    command = messages.java_command(java.home, UNLOCK_DIAGNOSTIC, "-XX:+PrintFlagsFinal", *options, "-version")
    done = run(command, capture_output=True, text=True, errors="replace", timeout=120)
    if done.returncode != 0:
        said = messages.complaint(done.stdout + "\n" + done.stderr) or f"exit code {done.returncode}"
        raise WorkerError(f"{java.home}: the JVM refused to start: {said}")
    return done.stdout, messages.warnings(done.stdout + "\n" + done.stderr)
