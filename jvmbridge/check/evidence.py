"""Evidence that C2 compiled an AES intrinsic: the harness loop run with inlining logged."""
from __future__ import annotations

import subprocess
import time

from jvmbridge.harness import harness_jar
from jvmbridge.intrinsics.jitlog import Evidence, intrinsic_method
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC
from jvmbridge.trust.launch import launch

# Reaches C2 and its intrinsics within a second or two on JDK 17 and 25.
MESSAGE_BYTES = 4096


def observe(java: JavaInstall, mode: Mode, options: tuple[str, ...], max_seconds: float) -> Evidence:
    """Run ``mode``'s loop until its intrinsics show up in the inlining log, or ``max_seconds``."""
    command = messages.java_command(java.home, UNLOCK_DIAGNOSTIC, *options, "-Xlog:jit+inlining=debug",
                                     "-cp", str(harness_jar()), "jvmbridge.harness.AesHarness",
                                     "loop", mode.transformation, str(MESSAGE_BYTES), str(max_seconds))
    started = time.perf_counter()
    evidence = Evidence()
    with launch(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace") as process:
        assert process.stdout is not None and process.stderr is not None  # both PIPE
        for line in process.stdout:
            method = intrinsic_method(line)
            if method and method not in evidence.seen:
                evidence.seen.append(method)
                if mode.proven_by(set(evidence.seen)):
                    evidence.proven = True
                    break
        process.kill()
        stderr = process.stderr.read()
        returncode = process.wait()
    evidence.seconds = time.perf_counter() - started
    if not evidence.proven and returncode not in (0, -9):
        evidence.error = messages.complaint(stderr) or f"exit code {returncode}"
    return evidence
