"""The JVM engine: each JDK with each JCE provider in its settings (SunJCE: intrinsics on and off)."""
from __future__ import annotations

import functools
import os
import secrets

from jvmbridge.conductor.conduct import Forked, slices_by_fork, warmup_chunks
from jvmbridge.engines.base import Engine, Sliced
from jvmbridge.forks.measure import merge_warmups
from jvmbridge.forks.parent import ChildOutcome
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

WARMUP_MAX_SECONDS = 15.0
# Interleaved, forks are summarised by slices' low quantiles: C2 finishing early in the first slices
# moves neither, so half a second is enough.
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
            # JPype 1.5's startJVM never returned under qemu-user (arm64 on x86); `java` itself runs.
            return "JPype cannot start a JVM inside a qemu-user emulated process (it hangs); run on the real CPU"
        return None

    def sliced(self, workloads: list[tuple[Workload, str]], matrix) -> list[Sliced]:
        # --shared-jvm: one JVM per setting for every workload.
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

        def measurement(workload: Workload, outcomes: list[Forked], failed: ChildOutcome | None) -> Measurement:
            return _measurement(java, provider, setting, workload, options, request, outcomes, failed)

        subject = f"JVM {java.label}, {provider.name}"
        return Sliced(name=f"{subject}, {setting.name}", subject=subject, accelerated=setting.accelerated,
                      module="jvmbridge.jvm.worker", request={**request, "parts": parts}, workloads=workloads,
                      measurement=measurement, warmup_min_seconds=SLICED_WARMUP_MIN_SECONDS,
                      warmup_max_seconds=WARMUP_MAX_SECONDS, why_failed=functools.partial(why_failed, java),
                      on_hang=thread_dump)

    def name(self, row, with_jdk: bool = True) -> str:
        return f"JVM {row.provider}" + (f", JDK {row.jdk_version}" if with_jdk else "")

    def jdk(self, row) -> str | None:
        return row.jdk_version

    def origin(self, row) -> str | None:
        home = getattr(row, "java_home", None)
        return home if isinstance(home, str) else None


def heap_share(jvms: int) -> str:
    """The option giving each of ``jvms`` live JVMs its share of one JVM's default heap (25%): each
    assumes the machine is its own, and a 28-JVM sweep outgrew memory (benchmarks/README.md)."""
    return f"-XX:MaxRAMPercentage={DEFAULT_MAX_RAM_PERCENTAGE / jvms:.4g}"


def _request(java: JavaInstall, provider: JceProvider, options: tuple[str, ...], classpath: tuple[str, ...]) -> JvmRequest:
    """What each JVM worker of one setting is asked."""
    return {
        "libjvm": str(java.libjvm),
        "options": [*launch_options(options, java_major(java.release_version)), *messages.crash_file_options()],
        "classpath": [str(harness_jar()), *classpath],
        "provider_class": provider.class_name,
        "provider_source": provider.where,
        "read_flags": flags_to_read(options),
    }


def _measurement(java: JavaInstall, provider: JceProvider, setting: JvmSetting, workload: Workload,
                 options: tuple[str, ...], request: JvmRequest, outcomes: list[Forked],
                 failed: ChildOutcome | None) -> Measurement:
    result = outcomes[0].answer
    flags = result["flags"]
    mismatched, verified_state = flags_read_back(options, flags)
    ran = setting_as_run(setting, flags)  # its label, "as asked" and ratios follow what ran
    jvm = result["jvm"]
    return Measurement(
        engine=JvmEngine.label,
        implementation=f"{result['provider']} on {jvm['java.vm.vendor']} {jvm['java.runtime.version']}",
        setting=ran.name,
        accelerated=ran.accelerated,
        as_requested=not mismatched and ran is setting,
        verified_state=verified_state, **workload.row_fields(),
        summary=summarize(slices_by_fork(outcomes), workload.sampling.first_stage, warmup_chunks(outcomes)),
        warmup=merge_warmups([o.warmup for o in outcomes]), fork_seconds=[o.seconds for o in outcomes],
        ciphertext=result["ciphertext"],
        loop_bytes_checked=True, loop_bytes_error=loop_bytes_error(workload.operation, result["after_loop"]),
        details={"provider": provider.name, "jdk_version": jvm["java.runtime.version"].split("+")[0],
                 "java_home": jvm["java.home"], "jvm_options": " ".join(request["options"]),
                 "jvm_collectors": jvm.get("collectors", "unknown"), "jvm_processors": str(jvm.get("processors", "unknown")),
                 "flag_origins": " ".join(f"{n}:{f['origin']}" for n, f in flags.items()),
                 **user_options(options[len(setting.options):]),
                 **({"requested_setting": setting.name} if ran is not setting else {})},
        notes=_notes(workload, flags, mismatched, outcomes[0].printed),
        failed_fork=why_failed(java, failed) if failed else None,
        busy={name: sum(r[name] for rounds in slices_by_fork(outcomes) for r in rounds) for name in ("gc_ms", "jit_ms")},
    )


def _notes(workload: Workload, flags: dict[str, dict], mismatched: dict[str, str], printed: str) -> list[str]:
    """The row's notes: flags not run as requested, the JVM's warnings, GHASH on with AES off."""
    notes = [f"{name} requested {want}, JVM runs {flags[name]['value'] if name in flags else 'without it'}"
             for name, want in mismatched.items()]
    notes += [f"JVM said: {line}" for line in messages.warnings(printed)]
    if (workload.operation.mode == "gcm" and flags.get("UseAES", {}).get("value") == "false"
            and flags.get("UseGHASHIntrinsics", {}).get("value") == "true"):
        notes.append("UseGHASHIntrinsics stays on with -UseAES: GCM's GHASH still runs on the CPU's instructions")
    return notes


def user_options(extra: tuple[str, ...]) -> dict[str, str]:
    """The row detail naming --jvm-arg options, which make it a configuration of its own; {} if none."""
    return {"jvm_args": " ".join(extra)} if extra else {}


def flags_read_back(options: tuple[str, ...], flags: dict[str, dict]) -> tuple[dict[str, str], str]:
    """The requested flags not run as asked, and the reported flags as a row shows them."""
    mismatched = {name: want for name, want in requested_flags(options).items()
                  if flags.get(name, {}).get("value") != want}
    return mismatched, " ".join(f"{name}={flag['value']}" for name, flag in flags.items())


def thread_dump(pid: int) -> str:
    """The hung JVM's threads (Thread.print over attach) beside the crash reports: where, or why not."""
    path = messages.crash_reports() / f"threads_pid{pid}-{secrets.token_hex(4)}.txt"
    try:
        threads = jcmd(pid, "Thread.print", timeout=20)
        with os.fdopen(create_private_file(path), "w") as out:
            out.write(threads)
    except (AttachError, HarnessUnavailable, OSError) as e:
        return f"no thread dump ({e})"
    return f"its threads: {path}"  # the socket this attach made it open goes when its worker is stopped


def why_failed(java: JavaInstall, failed: ChildOutcome) -> str:
    """One line on why a JVM fork gave no result: its crash, or its own complaint."""
    said = failed.stdout + "\n" + failed.stderr
    crash = messages.crash_summary(said)
    if crash:
        report = messages.crash_report(said)
        # A signal inside the JVM may be a broken intrinsic.
        hint = (f"; `jvmbridge verify --java {java.home}` tests its AES in every call pattern"
                if any(line.startswith("SIG") for line in crash) else "")
        return (f"{java.home}: the JVM crashed ({failed.how_it_ended}): {'; '.join(crash)}"
                + (f"; report: {report}" if report else "") + hint)
    complaint = messages.complaint(said)
    return f"{java.home}: {failed.error}" + (f"; the JVM said: {complaint}" if complaint else "")


def loop_bytes_error(operation: Operation, after: dict) -> str | None:
    """None when the compiled loop's bytes after the timed rounds equal OpenSSL's; else where they
    differ. (The one-shot check runs before the JIT compiles, so it misses a compiled intrinsic.)"""
    key, plaintext, mode = operation.key, operation.plaintext, operation.mode
    iv, decrypt = bytes.fromhex(after["iv"]), operation.direction == "decrypt"
    if "stream" in after:
        data = encrypt_message(key, operation.iv, plaintext, mode) if decrypt else plaintext
        actual, expected = bytes.fromhex(after["stream"]), stream_output(key, iv, data, after["updates"], mode, decrypt)
        what = f"{after['updates']} updates of {len(data)} bytes after the timed rounds"
        # The JCE may hold back up to a block (a padded decryption's last; JDK 17 SunJCE's GCM or CFB
        # partial one). Never CTR: it gives every byte at once (JDK-8292158 lost bytes of short updates).
        if mode != "ctr" and expected.startswith(actual) and len(expected) - len(actual) <= 16:
            return None
    else:
        actual = bytes.fromhex(after["message"])
        expected = plaintext if decrypt else encrypt_message(key, iv, plaintext, mode)
        what = "the last message of the timed rounds"
    return None if actual == expected else f"{what}: {_first_difference(actual, expected)}"


def _first_difference(actual: bytes, expected: bytes) -> str:
    """Where the JVM's bytes first differ from the expected ones, and how many it gave if fewer."""
    index = next((i for i, (a, b) in enumerate(zip(actual, expected)) if a != b), min(len(actual), len(expected)))
    return (f"first differs at byte {index} of {len(expected)}"
            + (f" (JVM gave {len(actual)} bytes)" if len(actual) != len(expected) else ""))
