"""The JVM engine: each JDK with each JCE provider in its settings (SunJCE: intrinsics on and off).
Parent side: build the worker's request, turn its answer into a Measurement."""
from __future__ import annotations

import functools
import os
import secrets

from jvmbridge.engines.base import Engine, Job, Sliced
from jvmbridge.forks.measure import merge_warmups
from jvmbridge.forks.parent import (
    Arm,
    ChildOutcome,
    WorkerError,
    fork_rounds,
    fork_seconds,
    fork_turns,
    fork_warmups,
    run_forks,
)
from jvmbridge.forks.protocol import JvmPart, JvmRequest
from jvmbridge.harness import HarnessUnavailable, harness_jar
from jvmbridge.host.cpu import cpu_info
from jvmbridge.jvm import messages
from jvmbridge.jvm.attach import AttachError, jcmd
from jvmbridge.jvm.discovery import JavaInstall
from jvmbridge.jvm.options import JvmSetting, flags_to_read, java_major, launch_options, requested_flags, setting_as_run
from jvmbridge.jvm.providers import JceProvider
from jvmbridge.jvm.providers import provider as provider_named
from jvmbridge.platforms import QEMU_USER
from jvmbridge.reference import encrypt_message, stream_output
from jvmbridge.results import Measurement
from jvmbridge.sampling.workload import Operation, Workload
from jvmbridge.stats.summary import summarize
from jvmbridge.trust.writer import create_private_file

# A JIT has settled when chunks agree; a second is the least we give C2 to compile the loop. (A
# longer, stricter warm-up did not make the rounds steadier: benchmarks/README.md, "JVM rows' noise".)
WARMUP_MIN_SECONDS = 1.0
# A later workload in the same JVM finds the common code compiled: its own warm-up still runs until
# its chunks agree and the JIT is quiet, but needs no second of its own.
LATER_WARMUP_MIN_SECONDS = 0.25
WARMUP_MAX_SECONDS = 15.0
# Interleaved (the conductor), a fork's row figure is the lower quartile of its 20 slices and its
# ratios take their fast ends: a loop C2 finishes compiling in its first slices moves neither, so
# half a second is enough here.
SLICED_WARMUP_MIN_SECONDS = 0.5
DEFAULT_MAX_RAM_PERCENTAGE = 25.0  # HotSpot's default MaxRAMPercentage: a JVM's heap at most a quarter of RAM


class JvmEngine(Engine):
    key, label = "jvm", "JVM"
    accelerator = "intrinsics"
    per_implementation = True
    runs_on_jvms = True
    fork_overhead_seconds = 1.5  # start-up and warm-up: 1.4-1.6 s a fork here (benchmarks/eta.py)

    def unavailable(self, matrix) -> str | None:
        emulation = cpu_info()["emulation"] or ""
        if emulation.startswith(QEMU_USER):
            # Seen here: JPype 1.5's startJVM never returned under qemu-user (arm64 on x86, OpenJDK 21),
            # while `java` itself runs; check and verify use `java` and still work.
            return "JPype cannot start a JVM inside a qemu-user emulated process (it hangs); run on the real CPU"
        return None

    def jobs_for(self, workloads, matrix):
        # One job per JVM, provider and workload, its settings' forks in turns: a JVM that measured
        # other sizes first runs code its JIT compiled with their profile too. --shared-jvm: one job
        # per JVM and provider, each fork's JVM measuring every workload (start-up and common warm-up
        # paid once).
        if not matrix.shared_jvm and len(workloads) > 1:
            return [job for each in workloads for job in self.jobs_for([each], matrix)]
        return [self._job(java, provider, workloads, matrix)
                for java in matrix.javas for provider in map(provider_named, matrix.providers)]

    def _job(self, java: JavaInstall, provider: JceProvider, workloads, matrix) -> Job:
        name = f"JVM {java.label}, {provider.name}"

        def measure(chosen: list[Workload]) -> list[Measurement | WorkerError]:
            return measure_jvm(java, provider, chosen, matrix.jvm_options, matrix.classpath)

        if len(provider.settings) == 1:
            return Job.batch(f"{name}, {provider.settings[0].name}", workloads, measure, shares_jit=True)
        return Job.in_turns(turns_name(java, provider), [f"{name}, {setting.name}" for setting in provider.settings],
                            workloads, measure, shares_jit=True)

    def slices(self, workloads, matrix) -> bool:
        return True

    def sliced(self, workloads: list[tuple[Workload, str]], matrix) -> list[Sliced]:
        # A JVM per setting and workload, as jobs_for (--shared-jvm: per setting, measuring every workload).
        together = [list(workloads)] if matrix.shared_jvm else [[each] for each in workloads]
        jvms = [(java, provider, setting, group) for java in matrix.javas
                for provider in map(provider_named, matrix.providers) for setting in provider.settings
                for group in together]
        heap = heap_share(len(jvms))
        return [self._sliced(*jvm, matrix, heap) for jvm in jvms]

    def _sliced(self, java: JavaInstall, provider: JceProvider, setting: JvmSetting,
                workloads: list[tuple[Workload, str]], matrix, heap: str) -> Sliced:
        options = (*setting.options, *matrix.jvm_options)
        request = _request(java, provider, options, matrix.classpath)
        request["options"] = [heap, *request["options"]]  # first: a -Xmx or MaxRAMPercentage of --jvm-arg wins
        parts = [JvmPart(**workload.loop_request(), transformation=workload.operation.transformation)
                 for workload, _ in workloads]

        def measurement(workload: Workload, outcomes: list[ChildOutcome], failed: ChildOutcome | None) -> Measurement:
            return _measurement(java, provider, setting, workload, options, request, outcomes, failed, "")

        subject = f"JVM {java.label}, {provider.name}"
        return Sliced(name=f"{subject}, {setting.name}", subject=subject, accelerated=setting.accelerated,
                      module="jvmbridge.jvm.slice_worker", request={**request, "parts": parts}, workloads=workloads,
                      measurement=measurement, warmup_min_seconds=SLICED_WARMUP_MIN_SECONDS,
                      warmup_max_seconds=WARMUP_MAX_SECONDS, why_failed=functools.partial(why_failed, java))

    def name(self, row, with_jdk: bool = True) -> str:
        return f"JVM {row.provider}" + (f", JDK {row.jdk_version}" if with_jdk else "")

    def jdk(self, row) -> str | None:
        return row.jdk_version

    def origin(self, row) -> str | None:
        home = getattr(row, "java_home", None)
        return home if isinstance(home, str) else None


def heap_share(jvms: int) -> str:
    """The option that gives each of ``jvms`` JVMs live at once its share of the heap one JVM would
    take by default (MaxRAMPercentage 25): each assumes the machine is its own. A size sweep's 28 JVMs
    on G1 grew young generations of gigabytes each, beyond the machine's memory: system time rose
    eightfold and whole forks of some JVMs ran never-compiled code (benchmarks/README.md)."""
    return f"-XX:MaxRAMPercentage={DEFAULT_MAX_RAM_PERCENTAGE / jvms:.4g}"


def turns_name(java: JavaInstall, provider: JceProvider) -> str:
    """The label of a JVM's job whose settings run their forks in turns, which its rows carry."""
    return f"JVM {java.label}, {provider.name}, {JvmEngine.accelerator} on and off in turns"


def measure_jvm(java: JavaInstall, provider: JceProvider, workloads: list[Workload], extra_options: tuple[str, ...],
                classpath: tuple[str, ...] = ()) -> list[Measurement | WorkerError]:
    """Each workload measured by the same JVM and provider in each of the provider's settings, fork
    after fork, the settings' forks in turns (forks.parent.run_forks); per setting and workload its
    Measurement or the WorkerError that says why it has none."""
    requests = [_request(java, provider, (*setting.options, *extra_options), classpath) for setting in provider.settings]
    parts = [JvmPart(**workload.loop_request(), transformation=workload.operation.transformation)
             for workload in workloads]
    measured = run_forks("jvmbridge.jvm.worker",
                         [Arm(request=request, parts=parts, samplings=[w.sampling for w in workloads],
                              allowances=[w.seconds_at_most(WARMUP_MAX_SECONDS) for w in workloads])
                          for request in requests], on_hang=thread_dump)
    in_turns = turns_name(java, provider) if len(requests) > 1 else ""
    return [_measurement(java, provider, setting, workload, (*setting.options, *extra_options), request,
                         forks.finished, forks.failed, in_turns)
            if forks.finished else WorkerError(why_failed(java, forks.failure))
            for arm, (setting, request) in enumerate(zip(provider.settings, requests))
            for workload, forks in zip(workloads, measured[arm * len(workloads):])]


def _request(java: JavaInstall, provider: JceProvider, options: tuple[str, ...], classpath: tuple[str, ...]) -> JvmRequest:
    """What each JVM child of one setting is asked."""
    return {
        "libjvm": str(java.libjvm),
        "options": [*launch_options(options, java_major(java.release_version)), *messages.crash_file_options()],
        "classpath": [str(harness_jar()), *classpath],
        "provider_class": provider.class_name,
        "provider_source": provider.where,
        "read_flags": flags_to_read(options),
        "warmup_min_seconds": WARMUP_MIN_SECONDS,
        "later_warmup_min_seconds": LATER_WARMUP_MIN_SECONDS,
        "warmup_max_seconds": WARMUP_MAX_SECONDS,
    }


def _measurement(java: JavaInstall, provider: JceProvider, setting: JvmSetting, workload: Workload,
                 options: tuple[str, ...], request: JvmRequest, outcomes: list[ChildOutcome],
                 failed: ChildOutcome | None, in_turns: str) -> Measurement:
    outcome, result = outcomes[0], outcomes[0].answer
    flags = result["flags"]
    mismatched, verified_state = flags_read_back(options, flags)
    ran = setting_as_run(setting, flags)  # its label, "as asked" and ratios follow what ran
    jvm = result["jvm"]
    notes = [f"{name} requested {want}, JVM runs {flags[name]['value'] if name in flags else 'without it'}"
             for name, want in mismatched.items()]
    notes += [f"JVM said: {line}" for line in messages.warnings(outcome.stdout + "\n" + outcome.stderr)]
    if (workload.operation.mode == "gcm" and flags.get("UseAES", {}).get("value") == "false"
            and flags.get("UseGHASHIntrinsics", {}).get("value") == "true"):
        notes.append("UseGHASHIntrinsics stays on with -UseAES: GCM's GHASH still runs on the CPU's instructions")
    return Measurement(
        engine=JvmEngine.label,
        implementation=f"{result['provider']} on {jvm['java.vm.vendor']} {jvm['java.runtime.version']}",
        setting=ran.name,
        accelerated=ran.accelerated,
        as_requested=not mismatched and ran is setting,
        verified_state=verified_state, **workload.row_fields(),
        summary=summarize(fork_rounds(outcomes), workload.sampling.first_stage, fork_warmups(outcomes)),
        warmup=merge_warmups([o.answer["warmup"] for o in outcomes]), fork_seconds=fork_seconds(outcomes),
        ciphertext=result["ciphertext"],
        loop_bytes_checked=True, loop_bytes_error=loop_bytes_error(workload.operation, result["after_loop"]),
        details={"provider": provider.name, "jdk_version": jvm["java.runtime.version"].split("+")[0],
                 "java_home": jvm["java.home"], "jvm_options": " ".join(request["options"]),
                 "jvm_collectors": jvm.get("collectors", "unknown"), "jvm_processors": str(jvm.get("processors", "unknown")),
                 "flag_origins": " ".join(f"{n}:{f['origin']}" for n, f in flags.items()),
                 **user_options(options[len(setting.options):]),
                 **({"requested_setting": setting.name} if ran is not setting else {})},
        notes=notes, failed_fork=why_failed(java, failed) if failed else None,
        busy={name: sum(r[name] for rounds in fork_rounds(outcomes) for r in rounds) for name in ("gc_ms", "jit_ms")},
        in_turns=in_turns, fork_turns=fork_turns(outcomes),
    )


def user_options(extra: tuple[str, ...]) -> dict[str, str]:
    """The row detail naming the JVM options the user added (--jvm-arg), which make it a
    configuration of its own when runs are set side by side; none without any."""
    return {"jvm_args": " ".join(extra)} if extra else {}


def flags_read_back(options: tuple[str, ...], flags: dict[str, dict]) -> tuple[dict[str, str], str]:
    """The requested flags the JVM does not run as asked (name -> value wanted), and the flags it
    reported ({name: {"value", "origin"}}) as a row shows them: "UseAES=true UseAESIntrinsics=true"."""
    mismatched = {name: want for name, want in requested_flags(options).items()
                  if flags.get(name, {}).get("value") != want}
    return mismatched, " ".join(f"{name}={flag['value']}" for name, flag in flags.items())


def thread_dump(pid: int) -> str:
    """The hung JVM's threads (Thread.print over its attach socket), saved beside the crash
    reports: where they went, or why there are none."""
    path = messages.crash_reports() / f"threads_pid{pid}-{secrets.token_hex(4)}.txt"
    try:
        threads = jcmd(pid, "Thread.print", timeout=20)
        with os.fdopen(create_private_file(path), "w") as out:
            out.write(threads)
    except (AttachError, HarnessUnavailable, OSError) as e:
        return f"no thread dump ({e})"
    return f"its threads: {path}"  # the socket this attach made it open goes when run_child stops it


def why_failed(java: JavaInstall, failed: ChildOutcome) -> str:
    """One line on why a JVM fork gave no result: its crash, or its own complaint."""
    said = failed.stdout + "\n" + failed.stderr
    crash = messages.crash_summary(said)
    if crash:
        report = messages.crash_report(said)
        # A signal inside the JVM (not, say, an OutOfMemoryError) may be a broken intrinsic.
        hint = (f"; `jvmbridge verify --java {java.home}` tests its AES in every call pattern"
                if any(line.startswith("SIG") for line in crash) else "")
        return (f"{java.home}: the JVM crashed ({failed.how_it_ended}): {'; '.join(crash)}"
                + (f"; report: {report}" if report else "") + hint)
    complaint = messages.complaint(said)
    return f"{java.home}: {failed.error}" + (f"; the JVM said: {complaint}" if complaint else "")


def loop_bytes_error(operation: Operation, after: dict) -> str | None:
    """None when the bytes the compiled loop gave after the timed rounds equal OpenSSL's for the
    same work; else where they first differ. (The one-shot ciphertext is checked before the JIT
    has compiled anything, so it cannot catch an intrinsic that goes wrong once compiled.)"""
    key, plaintext, mode = operation.key, operation.plaintext, operation.mode
    iv, decrypt = bytes.fromhex(after["iv"]), operation.direction == "decrypt"
    if "stream" in after:
        data = encrypt_message(key, operation.iv, plaintext, mode) if decrypt else plaintext
        actual, expected = bytes.fromhex(after["stream"]), stream_output(key, iv, data, after["updates"], mode, decrypt)
        what = f"{after['updates']} updates of {len(data)} bytes after the timed rounds"
        # The JCE may hold back up to a block until the next update or doFinal: a padded decryption's
        # last block, and (JDK 17's SunJCE) a GCM or CFB encryption's partial one (65504 of 65512 bytes).
        # Never CTR's: a counter mode gives every byte at once, and one that gives fewer is wrong
        # (JDK-8292158 lost bytes of short CTR updates).
        if mode != "ctr" and expected.startswith(actual) and len(expected) - len(actual) <= 16:
            return None
    else:
        actual = bytes.fromhex(after["message"])
        expected = plaintext if decrypt else encrypt_message(key, iv, plaintext, mode)
        what = "the last message of the timed rounds"
    if actual == expected:
        return None
    index = next((i for i, (a, b) in enumerate(zip(actual, expected)) if a != b), min(len(actual), len(expected)))
    return (f"{what}: first differs at byte {index} of {len(expected)}"
            + (f" (JVM gave {len(actual)} bytes)" if len(actual) != len(expected) else ""))
