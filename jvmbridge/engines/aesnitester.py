"""AESNITester's own figure, to hold jvmbridge's rows next to published AESNITester results: a fresh
`java` per fork, clock from `main` (start-up and JIT included), `getBytes()` in the loop."""
from __future__ import annotations

import functools

from jvmbridge.conductor.conduct import Forked, slices_by_fork
from jvmbridge.engines.base import Sliced
from jvmbridge.engines.jvm import JvmEngine, flags_read_back, loop_bytes_error, user_options, why_failed
from jvmbridge.forks.parent import ChildOutcome
from jvmbridge.harness import harness_jar
from jvmbridge.jvm import messages
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.options import INTRINSICS_OFF, INTRINSICS_ON, JvmSetting, java_major, launch_options, setting_as_run
from jvmbridge.results import Measurement
from jvmbridge.sampling.workload import Workload
from jvmbridge.stats.summary import summarize

# Messages per fork without --iterations (AESNITester always runs a fixed count).
DEFAULT_ITERATIONS = 10**7
# A JVM's start, beyond its run's own allowance.
START_SECONDS = 20.0


class AesniTesterEngine(JvmEngine):
    key, label = "aesnitester", "AESNITester (whole run)"
    shapes = ("message",)
    default = False  # opt in with --engine aesnitester

    def slices(self, workloads, matrix) -> bool:
        return False  # a fresh JVM per figure: AESNITester times its run from main

    def sliced(self, workloads: list[tuple[Workload, str]], matrix) -> list[Sliced]:
        return [self._setting(java, setting, workload, tag, matrix.jvm_options)
                for workload, tag in workloads for java in matrix.javas for setting in (INTRINSICS_ON, INTRINSICS_OFF)]

    def _setting(self, java: JavaInstall, setting: JvmSetting, workload: Workload, tag: str,
                 extra_options: tuple[str, ...]) -> Sliced:
        op, sampling = workload.operation, workload.sampling
        options = (*setting.options, *extra_options)
        iterations = sampling.fork_iterations or DEFAULT_ITERATIONS
        command = messages.java_command(java.home, *launch_options(options, java_major(java.release_version)),
                                        "-cp", str(harness_jar()), "jvmbridge.harness.AesniTester", op.key.hex(),
                                        op.iv.hex(), op.plaintext.decode("ascii"), str(iterations))
        part = {"command": command, "iterations": iterations, "seconds": START_SECONDS + workload.seconds_at_most(0)}
        if (op.mode, op.direction, sampling.threads) != ("cbc", "encrypt", 1):
            part["refused"] = "AESNITester's loop only encrypts AES/CBC/PKCS5Padding, on one thread"

        def measurement(each: Workload, outcomes: list[Forked], failed: ChildOutcome | None) -> Measurement:
            return _measurement(java, setting, each, options, extra_options, command, iterations, outcomes, failed)

        return Sliced(name=f"AESNITester {java.label}, {setting.name}", subject=f"AESNITester {java.label}",
                      accelerated=setting.accelerated, module="jvmbridge.jvm.aesnitester_worker",
                      request={"parts": [part]}, workloads=[(workload, tag)], measurement=measurement,
                      warmup_min_seconds=0.0, warmup_max_seconds=0.0, why_failed=functools.partial(why_failed, java),
                      whole_runs=True)

    def subject(self, implementation: str | None) -> str:
        return f"AESNITester, {implementation}" if implementation else "AESNITester"

    def name(self, row, with_jdk: bool = True) -> str:
        return "AESNITester" + (f", JDK {row.jdk_version}" if with_jdk else "")


def _measurement(java: JavaInstall, setting: JvmSetting, workload: Workload, options: tuple[str, ...],
                 extra_options: tuple[str, ...], command: list[str], iterations: int,
                 outcomes: list[Forked], failed: ChildOutcome | None) -> Measurement:
    op, said = workload.operation, outcomes[-1].answer
    flags = {name: {"value": value, "origin": origin} for name, (value, origin) in said["flags"].items()}
    mismatched, verified_state = flags_read_back(options, flags)
    ran = setting_as_run(setting, flags)
    version = said["java.runtime.version"]
    return Measurement(
        engine=AesniTesterEngine.label,
        implementation=f"{said['provider']} on {said['java.vm.vendor']} {version}",
        setting=ran.name, accelerated=ran.accelerated, as_requested=not mismatched and ran is setting,
        verified_state=verified_state,
        **workload.row_fields(), summary=summarize(slices_by_fork(outcomes), workload.sampling.first_stage),
        loop_bytes_checked=True, loop_bytes_error=loop_bytes_error(op, {"message": said["output"], "iv": op.iv.hex()}),
        details={"provider": said["provider"].split()[0], "jdk_version": version.split("+")[0],
                 "java_home": said["java.home"], "command": " ".join(command[:-4]) + " KEY IV TEXT N",
                 **user_options(extra_options),
                 **({"requested_setting": setting.name} if ran is not setting else {})},
        notes=[f"AESNITester's figure: {iterations:,} messages per fresh JVM, timed from the start of main "
               "(start-up, class loading, interpreter, JIT and String.getBytes() included); one sample per fork"],
        failed_fork=why_failed(java, failed) if failed else None,
    )
