"""Evidence that C2 really compiled an AES intrinsic: run the harness loop with inlining logged.

`-Xlog:jit+inlining=debug` prints each inlining decision, e.g.
`@ 36   com.sun.crypto.provider.CipherBlockChaining::implEncrypt (104 bytes)   (intrinsic)`,
and needs no diagnostic unlock. `-XX:+PrintCompilation` would be misleading: it lists the Java
fallback being compiled and has no intrinsic marker.
"""
from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field

from jvmbridge.check.modes import Mode
from jvmbridge.harness import harness_jar
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC

_INLINING_TREE = re.compile(r"^\s*@ \d+\s")  # a decision printed without decorations, as C2 does for some
_INTRINSIC = re.compile(r"com\.sun\.crypto\.provider\.(?P<method>[\w$]+::\w+)\s+\(\d+ bytes\)\s+\(intrinsic")
# 4 KiB messages reach C2 and its intrinsics within a second or two on JDK 17 and 25.
MESSAGE_BYTES = 4096


@dataclass
class Evidence:
    seen: list[str] = field(default_factory=list)  # crypto methods logged as (intrinsic), in order
    proven: bool = False
    seconds: float = 0.0
    error: str | None = None  # the JVM did not run

    def as_dict(self) -> dict:
        return {"seen": self.seen, "proven": self.proven, "seconds": round(self.seconds, 2), "error": self.error}


def intrinsic_method(line: str) -> str | None:
    """"CounterMode::implCrypt" for an inlining-log line that shows it used as an intrinsic."""
    match = _INTRINSIC.search(line)
    return match["method"] if match else None


def is_inlining_log(line: str) -> bool:
    """Whether ``line`` belongs to the JIT's inlining log, decorated (`[jit,inlining]`) or not."""
    return "inlining" in line or bool(_INLINING_TREE.match(line))


def observe(java: JavaInstall, mode: Mode, options: tuple[str, ...], max_seconds: float) -> Evidence:
    """Run ``mode``'s loop until its intrinsics show up in the inlining log, or ``max_seconds``."""
    command = [str(java.home / "bin" / "java"), UNLOCK_DIAGNOSTIC, *options, "-Xlog:jit+inlining=debug",
               "-cp", str(harness_jar()), "jvmbridge.harness.AesHarness",
               "loop", mode.transformation, str(MESSAGE_BYTES), str(max_seconds)]
    started = time.perf_counter()
    evidence = Evidence()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace") as process:
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
