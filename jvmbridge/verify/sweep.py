"""One run of the Java sweep in a fresh JVM, watched: passes begun after the inlining log proves C2
compiled the intrinsics tested them; a JVM that dies is a result too."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from jvmbridge.harness import harness_jar
from jvmbridge.intrinsics.jitlog import intrinsic_method, is_inlining_log
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC
from jvmbridge.trust.launch import launch
from jvmbridge.verify.plan import Case

PATTERNS = ("oneshot", "updates", "bytes", "mixed", "inplace", "heap", "direct", "reuse")
# What each pattern does, for people reading a divergence.
PATTERN_MEANING = {
    "oneshot": "one doFinal(byte[])",
    "updates": "update() calls of 1, 2, ..., 15 bytes in turn, then doFinal()",
    "bytes": "update(byte[], offset, 1) calls, each returning a new array, then doFinal()",
    "mixed": "update() calls mixing 1-15-byte and 16-4111-byte pieces, then doFinal()",
    "inplace": "doFinal with input and output the same array",
    "heap": "doFinal(ByteBuffer, ByteBuffer), heap buffers",
    "direct": "doFinal(ByteBuffer, ByteBuffer), direct buffers",
    "reuse": "one Cipher re-initialised per message, doFinal twice (compare's loop)",
}
# How long the pass under way may finish after the JVM is told to stop.
_STOP_GRACE_SECONDS = 20


@dataclass(frozen=True)
class Target:
    """The JVM as it is to be verified: its options, extra jars, and a JCE provider to put first."""
    java: JavaInstall
    options: tuple[str, ...] = ()
    classpath: tuple[str, ...] = ()
    provider_class: str = ""  # "" for the JVM's own providers (SunJCE)

    def plus_options(self, *extra: str) -> "Target":
        return dataclasses.replace(self, options=(*self.options, *extra))


@dataclass(frozen=True)
class Divergence:
    case: Case
    pattern: str
    pass_number: int
    compiled: bool  # the pass began after the intrinsics were seen compiled
    index: int | None = None  # first differing byte
    actual: str | None = None  # that byte from the JVM, hex ("-" past the end)
    expected: str | None = None  # and from OpenSSL
    actual_length: int | None = None
    error: str | None = None  # an exception instead of bytes

    def what(self) -> str:
        if self.error:
            return self.error
        return (f"first differs at byte {self.index} (JVM {self.actual}, OpenSSL {self.expected}"
                + (f"; JVM gave {self.actual_length} bytes" if self.actual == "-" or self.expected == "-" else "")
                + ")")


@dataclass(frozen=True)
class Crash:
    returncode: int
    lines: list[str]  # the crash summary's first informative lines
    report: str | None  # the hs_err file, where the JVM says it wrote one
    during: str  # "AES-128 encrypt of 77 bytes, inplace" when traced, else "pass N"


@dataclass
class SweepOutcome:
    passes: int = 0
    compiled_passes: int = 0
    seen: list[str] = field(default_factory=list)  # crypto methods logged as (intrinsic), in order
    proven_after: float | None = None  # seconds from start until the mode's intrinsics were seen
    divergences: list[Divergence] = field(default_factory=list)
    divergent_runs: int = 0
    crash: Crash | None = None
    error: str | None = None  # the sweep could not run at all
    seconds: float = 0.0
    last_traced: tuple[Case, str] | None = None  # with --trace: the case and pattern under way

    @property
    def proven(self) -> bool:
        return self.proven_after is not None


def run_sweep(target: Target, mode: Mode, plan_path: Path, cases: dict[int, Case],
              patterns: tuple[str, ...], budget: float, compiled_passes: int | None, prove: bool = True,
              trace: bool = False, until_wrong: frozenset[str] = frozenset()) -> SweepOutcome:
    """Run passes until ``compiled_passes`` began after the intrinsics were proven, or ``budget``
    seconds. Without ``prove`` every pass counts; once each of ``until_wrong`` diverged, stop."""
    command = messages.java_command(
        target.java.home, UNLOCK_DIAGNOSTIC, *target.options, "-Xlog:jit+inlining=debug:stderr",
        "-cp", os.pathsep.join([str(harness_jar()), *target.classpath]), "jvmbridge.harness.Conformance",
        str(plan_path), ",".join(patterns), *(["--trace"] if trace else []),
        *(["--provider", target.provider_class] if target.provider_class else []))
    return _Watch(mode, cases, budget, compiled_passes, prove, until_wrong).run(command)


class _Watch:
    def __init__(self, mode: Mode, cases: dict[int, Case], budget: float, compiled_passes: int | None, prove: bool,
                 until_wrong: frozenset[str]):
        self.mode, self.cases, self.budget, self.wanted, self.prove = mode, cases, budget, compiled_passes, prove
        self.until_wrong = until_wrong
        self.outcome = SweepOutcome()
        self.other_stdout: list[str] = []
        self.stderr_tail: list[str] = []
        self.started = 0.0
        self.compiled_at_begin: dict[int, bool] = {}
        self.stopping = False
        self.killed = False  # the pass under way outlived the budget and its grace

    def run(self, command: list[str]) -> SweepOutcome:
        self.started = time.perf_counter()
        try:
            process = launch(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace")
        except OSError as e:
            self.outcome.error = f"cannot run {command[0]}: {e.strerror}"
            return self.outcome
        with process:
            log = threading.Thread(target=self._read_log, args=(process.stderr,), daemon=True)
            log.start()
            deadline = threading.Timer(self.budget + _STOP_GRACE_SECONDS, self._kill, args=(process,))
            deadline.start()
            try:
                assert process.stdout is not None  # PIPE
                for line in process.stdout:
                    self._on_line(line.rstrip("\n"), process)
            finally:
                deadline.cancel()
                self._stop(process)
                returncode = process.wait()
                log.join(timeout=5)
        self.outcome.seconds = time.perf_counter() - self.started
        self._judge_exit(returncode)
        return self.outcome

    def _read_log(self, stream) -> None:
        for line in stream:
            method = intrinsic_method(line)
            if method is None:
                # Keep the last few: they say why a JVM refused to start.
                if not is_inlining_log(line):
                    self.stderr_tail = (self.stderr_tail + [line.rstrip()])[-20:]
                continue
            if method not in self.outcome.seen:
                self.outcome.seen.append(method)
                if self.outcome.proven_after is None and self.mode.proven_by(set(self.outcome.seen)):
                    self.outcome.proven_after = time.perf_counter() - self.started

    def _on_line(self, line: str, process: subprocess.Popen) -> None:
        if not line.startswith("@jvb "):
            self.other_stdout.append(line)
            return
        kind, *fields = line[5:].split(" ")
        if kind == "begin":
            self._pass_begins(int(fields[0]), process)
        elif kind == "case":
            self.outcome.last_traced = (self.cases[int(fields[0])], fields[1])
        elif kind == "end":
            number, divergent = int(fields[0]), int(fields[1])
            self.outcome.passes = number
            self.outcome.divergent_runs += divergent
            self.outcome.compiled_passes += self.compiled_at_begin.get(number, False)
            if time.perf_counter() - self.started > self.budget:
                self._stop(process)
        elif kind == "fatal":
            self.outcome.error = " ".join(fields)
        elif kind in ("diff", "error"):
            self._diverged(self._divergence(kind, fields), process)

    def _pass_begins(self, number: int, process: subprocess.Popen) -> None:
        """Note whether pass ``number`` runs compiled, and stop after it if it is the last wanted."""
        self.compiled_at_begin[number] = self.outcome.proven or not self.prove
        if self.wanted is not None and sum(self.compiled_at_begin.values()) >= self.wanted:
            self._stop(process)  # the JVM reads it between passes: this one is the last

    def _diverged(self, divergence: Divergence, process: subprocess.Popen) -> None:
        """Keep ``divergence``, and stop once every pattern wanted wrong has gone wrong."""
        self.outcome.divergences.append(divergence)
        if self.until_wrong and self.until_wrong <= {d.pattern for d in self.outcome.divergences}:
            self._stop(process)

    def _divergence(self, kind: str, fields: list[str]) -> Divergence:
        number, case_id, pattern = int(fields[0]), int(fields[1]), fields[2]
        found = Divergence(case=self.cases[case_id], pattern=pattern, pass_number=number,
                           compiled=self.compiled_at_begin.get(number, False))
        if kind == "error":
            return replace(found, error=" ".join(fields[3:]))
        index, actual, expected, length = fields[3:7]
        return replace(found, index=int(index), actual=actual, expected=expected, actual_length=int(length))

    def _kill(self, process: subprocess.Popen) -> None:
        self.killed = True
        process.kill()

    def _stop(self, process: subprocess.Popen) -> None:
        if self.stopping:
            return
        self.stopping = True
        try:
            assert process.stdin is not None  # PIPE
            process.stdin.write("stop\n")
            process.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass  # it already exited

    def _judge_exit(self, returncode: int) -> None:
        if returncode == 0 or self.outcome.error:
            return
        if self.killed:
            # Finished passes stand; with none, nothing was checked.
            if self.outcome.passes == 0:
                # In both commands' words: this runs under verify and check.
                self.outcome.error = (f"no pass finished within {self.budget + _STOP_GRACE_SECONDS:.0f} s: "
                                      "more time helps (verify --jdk-time, check --verify-time)")
            return
        crash_lines = [line for line in self.other_stdout if line.startswith("#")]
        output = "\n".join(crash_lines)
        if not crash_lines and self.outcome.passes == 0 and not self.compiled_at_begin:
            # It never ran: a refused option or broken JVM says why on stderr.
            self.outcome.error = self._last_said(returncode)
            return
        self.outcome.crash = Crash(returncode=returncode, lines=messages.crash_summary(output),
                                   report=messages.crash_report(output), during=self._crashed_during())

    def _last_said(self, returncode: int) -> str:
        """The JVM's last line on stderr, else on stdout; else its exit code."""
        said = ([line for line in self.stderr_tail if line.strip()]
                or [line for line in self.other_stdout if line.strip()])
        return said[-1] if said else f"exit code {returncode}"

    def _crashed_during(self) -> str:
        """The case and pattern the trace last announced before the crash, else the pass it was in."""
        traced = self.outcome.last_traced
        return f"{traced[0].describe()}, {traced[1]}" if traced else f"pass {max(self.compiled_at_begin, default=0)}"
