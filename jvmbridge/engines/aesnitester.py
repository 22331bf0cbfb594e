"""AESNITester's own figure: a fresh `java` per fork running AESNITester's loop and clock
(the harness class AesniTester), so jvmbridge's steady-state rows can be held next to the
AESNITester results people publish. What differs from the JVM engine's figure: the clock starts
with `main` (start-up, class loading, interpreter and JIT included), the String plaintext is
encoded (`getBytes()`) inside the loop, and a fork is one sample of a fixed message count."""
from __future__ import annotations

import functools
import subprocess

from jvmbridge.engines.base import Engine, Job
from jvmbridge.engines.jvm import JvmEngine, flags_read_back, loop_bytes_error, user_options, why_failed
from jvmbridge.forks.parent import START_SECONDS, ChildOutcome, WorkerError
from jvmbridge.harness import harness_jar
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.options import INTRINSICS_OFF, INTRINSICS_ON, JvmSetting, java_major, launch_options, setting_as_run
from jvmbridge.results import Measurement
from jvmbridge.sampling.policy import forks_wanted
from jvmbridge.sampling.workload import Workload
from jvmbridge.stats.summary import one_round_each, summarize
from jvmbridge.trust.launch import run

# AESNITester always runs a fixed count; without --iterations, this many messages per fork.
DEFAULT_ITERATIONS = 10**7


class AesniTesterEngine(JvmEngine):
    key, label = "aesnitester", "AESNITester (whole run)"
    shapes = ("message",)
    default = False  # opt in with --engine aesnitester
    jobs_for = Engine.jobs_for  # a fresh JVM per figure: AESNITester times its run from main
    slices, sliced = Engine.slices, Engine.sliced  # ... so none of it can be a slice: its forks run on their own

    def jobs(self, workload, matrix, tag):
        return [Job.of(f"AESNITester {java.label}, {setting.name}{tag}", workload,
                    functools.partial(measure, java, setting, workload, matrix.jvm_options))
                for java in matrix.javas for setting in (INTRINSICS_ON, INTRINSICS_OFF)]

    def subject(self, implementation: str | None) -> str:
        return f"AESNITester, {implementation}" if implementation else "AESNITester"

    def name(self, row, with_jdk: bool = True) -> str:
        return "AESNITester" + (f", JDK {row.jdk_version}" if with_jdk else "")


def measure(java: JavaInstall, setting: JvmSetting, workload: Workload, extra_options: tuple[str, ...]) -> Measurement:
    op, sampling = workload.operation, workload.sampling
    if (op.mode, op.direction, sampling.threads) != ("cbc", "encrypt", 1):
        raise WorkerError("AESNITester's loop only encrypts AES/CBC/PKCS5Padding, on one thread")
    options = (*setting.options, *extra_options)
    iterations = sampling.fork_iterations or DEFAULT_ITERATIONS
    command = messages.java_command(java.home, *launch_options(options, java_major(java.release_version)),
                                    "-cp", str(harness_jar()), "jvmbridge.harness.AesniTester", op.key.hex(),
                                    op.iv.hex(), op.plaintext.decode("ascii"), str(iterations))
    rounds: list[dict] = []
    said: dict = {}
    failed: ChildOutcome | None = None
    # Its whole run is one round: a JVM start, then every message at the bound run_child uses.
    deadline = START_SECONDS + workload.seconds_at_most(0)
    while forks_wanted([sampling], [one_round_each(rounds)])[0]:
        try:
            done = run(command, capture_output=True, text=True, errors="replace", timeout=deadline)
        except subprocess.TimeoutExpired:
            failed = ChildOutcome(result=None, returncode=-9, stdout="", stderr="",
                                  stopped=f"no answer within {deadline:.0f} s (the deadline its budget "
                                          "gives): stopped")
            if not rounds:
                raise WorkerError(f"{java.home}: {failed.error}") from None
            break
        if done.returncode != 0:
            failed = ChildOutcome(result=None, returncode=done.returncode, stdout=done.stdout, stderr=done.stderr)
            if not rounds:
                raise WorkerError(why_failed(java, failed))
            break
        said = _fields(done.stdout)
        rounds.append({"iterations": iterations, "ns": int(said["elapsed_ns"])})
    flags = {name: {"value": value, "origin": origin} for name, (value, origin) in said["flags"].items()}
    mismatched, verified_state = flags_read_back(options, flags)
    ran = setting_as_run(setting, flags)
    version = said["java.runtime.version"]
    return Measurement(
        engine=AesniTesterEngine.label,
        implementation=f"{said['provider']} on {said['java.vm.vendor']} {version}",
        setting=ran.name, accelerated=ran.accelerated, as_requested=not mismatched and ran is setting,
        verified_state=verified_state,
        **workload.row_fields(), summary=summarize(one_round_each(rounds), sampling.first_stage),
        loop_bytes_checked=True, loop_bytes_error=loop_bytes_error(op, {"message": said["output"], "iv": op.iv.hex()}),
        details={"provider": said["provider"].split()[0], "jdk_version": version.split("+")[0],
                 "java_home": said["java.home"], "command": " ".join(command[:-4]) + " KEY IV TEXT N",
                 **user_options(extra_options),
                 **({"requested_setting": setting.name} if ran is not setting else {})},
        notes=[f"AESNITester's figure: {iterations:,} messages per fresh JVM, timed from the start of main "
               "(start-up, class loading, interpreter, JIT and String.getBytes() included); one sample per fork"],
        failed_fork=why_failed(java, failed) if failed else None,
    )


def _fields(stdout: str) -> dict:
    """The harness's "KEY VALUE..." lines: elapsed_ns, output, provider, property ..., flag ..."""
    fields: dict = {"flags": {}}
    for line in stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "flag":
            name, value, origin = rest.split(" ", 2)
            fields["flags"][name] = (value, origin)
        elif kind == "property":
            name, _, value = rest.partition(" ")
            fields[name] = value
        elif kind in ("elapsed_ns", "output", "provider"):
            fields[kind] = rest
    return fields
