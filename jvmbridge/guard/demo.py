"""`jvmbridge guard --java PATH`: the guard in a JVM of its own, read as `check --pid` reads a server's."""
from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.forks.parent import ChildOutcome, WorkerError
from jvmbridge.guard.state import PROPERTY, ModeState, parse
from jvmbridge.harness import guard_jar, harness_jar
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.live import live_property
from jvmbridge.trust.launch import launch

# Long enough for C2 to compile the JCE's AES as a server's would.
WORKLOAD_SECONDS = 5.0
_POLL_SECONDS = 1.0


class JvmEnded(WorkerError):
    """The JVM died before the guard had its answers (a crash, a refused option)."""


@dataclass
class Demonstration:
    command: list[str]
    states: list[ModeState]
    seconds: float
    output: str  # what the JVM printed (the guard's log line on a WRONG mode)


def demonstrate(java: JavaInstall, options: str, timeout: float, jvm_options: tuple[str, ...] = (),
                classpath: tuple[str, ...] = ()) -> Demonstration:
    """Start ``java`` with the guard and the workload, read its property until every mode settles or
    ``timeout``, then stop it leaving nothing behind."""
    with tempfile.TemporaryDirectory(prefix="jvmbridge-guard-") as repository:
        own = (f"-XX:FlightRecorderOptions:repository={repository}",
               f"-javaagent:{guard_jar()}" + (f"={options}" if options else ""))
        command = messages.java_command(
            java.home, *jvm_options, "-cp", os.pathsep.join([str(harness_jar()), *classpath]),
            "jvmbridge.harness.AesWorkload", str(WORKLOAD_SECONDS), own=own)
        started = time.monotonic()
        # Crash reports and JFR's emergency dump go with jvmbridge's crash reports, not to the cwd.
        process = launch(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                         cwd=messages.crash_reports())
        try:
            states = _guard_states(process, started + timeout)
        finally:
            ended = process.poll()  # before the guard had its answers: the JVM died (a crash, a refused option)
            output = _stop(process)
    if ended is not None:
        last_words = messages.crash_summary(output) or output.strip().splitlines()[-3:]
        raise JvmEnded(f"{java.home}: the JVM ended "
                       f"({ChildOutcome(result=None, returncode=ended, stdout='', stderr='').how_it_ended}) "
                       f"before the guard had its answers: {'; '.join(last_words)}")
    if not states:
        raise WorkerError(f"{java.home}: the guard said nothing within {timeout:.0f} s"
                          + (f"; the JVM said: {output.strip()[-300:]}" if output.strip() else ""))
    return Demonstration(command=command, states=states, seconds=time.monotonic() - started, output=output)


def _guard_states(process: subprocess.Popen, deadline: float) -> list[ModeState]:
    """The guard's modes as last said, read until all settle, the JVM ends or ``deadline``."""
    states: list[ModeState] = []
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(_POLL_SECONDS)
        try:
            said = live_property(process.pid, PROPERTY)
        except WorkerError:  # not attachable yet (the JVM is starting)
            continue
        states = parse(said) if said else []
        if states and all(state.settled for state in states):
            break
    return states


def _stop(process: subprocess.Popen) -> str:
    """SIGTERM (its shutdown removes its perf data), kill if need be, remove the attach socket; its output."""
    process.terminate()
    try:
        output, _ = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    Path(f"/tmp/.java_pid{process.pid}").unlink(missing_ok=True)
    return output
