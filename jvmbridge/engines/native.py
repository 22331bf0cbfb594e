"""The native engines, each with the CPU's AES acceleration on and off: pyca/cryptography's
OpenSSL driven by a Python loop in a child, and `openssl speed`'s C loop run directly."""
from __future__ import annotations

import os
import shutil
import subprocess

from jvmbridge.child import WorkerError, rounds_of, run_forks
from jvmbridge.cpu import cpu_info, lacks
from jvmbridge.engines import Engine, Job
from jvmbridge.measure import merge_warmups
from jvmbridge.native import openssl_cli
from jvmbridge.platforms import current
from jvmbridge.results import Measurement
from jvmbridge.stats import summarize
from jvmbridge.workload import Operation, Workload

# The native loops have no JIT to wait for; a short warm-up settles caches and allocator.
NATIVE_WARMUP = {"warmup_min_seconds": 0.2, "warmup_max_seconds": 3.0}


class NativeEngine(Engine):
    """An engine over OpenSSL, measured with the CPU's AES acceleration on and then masked off."""
    accelerator = current().accelerator
    title = ""  # the start of its job labels

    def jobs(self, workload, matrix, tag):
        cpu_has_aes = not lacks(cpu_info()["features"], current().aes_feature)
        return [Job(f"{self.title}, {current().setting(on)}{tag}", workload,
                    lambda on=on: self.measure(workload, matrix, on, cpu_has_aes)) for on in (True, False)]

    def measure(self, workload: Workload, matrix, accelerated: bool, cpu_has_aes: bool) -> Measurement:
        raise NotImplementedError

    @staticmethod
    def forks(module: str, request: dict, sampling, accelerated: bool, cpu_has_aes: bool):
        """A worker's forks with OpenSSL's acceleration as asked: (outcomes, the failed fork or None,
        (as requested, the state OpenSSL reported)). No finished fork: WorkerError."""
        outcomes, failed = run_forks(module, request, sampling,
                                     env=current().openssl_environment(dict(os.environ), accelerated))
        if failed and not outcomes:
            raise WorkerError(failed.error)
        return outcomes, failed, read_back(outcomes[0].result["cpuinfo"], accelerated, cpu_has_aes)


class PycaEngine(NativeEngine):
    key, label, title = "pyca", "OpenSSL via pyca (Python loop)", "OpenSSL via pyca"
    reference_rank = 3
    wraps, overhead = "openssl-cli", "Python"  # the same library's C loop: how much of a message is Python

    def measure(self, workload, matrix, accelerated, cpu_has_aes):
        op, sampling = workload.operation, workload.sampling
        request = {**workload.loop_request(), "mode": op.mode, "input": op.loop_input().hex(), **NATIVE_WARMUP}
        outcomes, failed, (as_requested, state) = self.forks("jvmbridge.native.pyca_worker", request, sampling,
                                                             accelerated, cpu_has_aes)
        result = outcomes[0].result
        summary = summarize(rounds_of(outcomes), len(outcomes))
        notes = ["fresh encryptor (and padder for CBC) per message; includes Python call overhead"
                 if op.shape == "message"
                 else "update_into on one encryptor; includes Python call overhead"]
        asked = None if sampling.iterations is None else sampling.iterations * sampling.threads * len(outcomes)
        if asked is not None and summary.iterations < asked:
            notes.append(f"ran {summary.iterations:,} of {asked:,} messages (time budget)")
        return Measurement(
            engine=self.label, implementation=f"{result['library']}, {result['openssl_version']}",
            setting=current().setting(accelerated), accelerated=accelerated, as_requested=as_requested,
            verified_state=state, **workload.row_fields(), summary=summary,
            warmup=merge_warmups([o.result["warmup"] for o in outcomes]), ciphertext=result["ciphertext"],
            details={"openssl_cpuinfo": result["cpuinfo"]}, notes=notes, failed_fork=failed.error if failed else None,
        )


class OpensslSpeedEngine(NativeEngine):
    key, label, title = "openssl-cli", "OpenSSL speed (C loop)", "openssl speed"
    shapes = ("stream",)
    reference_rank = 1
    speed_options: tuple[str, ...] = ()  # what this engine adds to `openssl speed`

    def work(self, op: Operation) -> str:
        """What one operation of its loop does, for the row's note."""
        return (f"EVP_{op.direction.capitalize()}Update on a {op.message_bytes}-byte buffer, "
                "no per-message init or padding")

    def unavailable(self, matrix) -> str | None:
        if not (matrix.openssl and shutil.which(matrix.openssl)):
            return f"no `{matrix.openssl or 'openssl'}` command (--openssl PATH)"
        return None

    def origin(self, row) -> str | None:
        command = getattr(row, "command", None)
        return command.split()[0] if isinstance(command, str) else None

    def measure(self, workload, matrix, accelerated, cpu_has_aes):
        op, sampling = workload.operation, workload.sampling
        openssl = shutil.which(matrix.openssl)
        env = current().openssl_environment(dict(os.environ), accelerated)
        described = openssl_cli.describe(openssl, env)
        as_requested, state = read_back(described["cpuinfo"], accelerated, cpu_has_aes)
        decrypt = ("-decrypt",) if op.direction == "decrypt" else ()
        # `openssl speed -seconds` takes whole seconds and counts operations itself: --iterations cannot apply.
        seconds = max(1, round(sampling.round_seconds))
        command = openssl_cli.speed_command(openssl, op.cipher_name, op.message_bytes, seconds,
                                            (*matrix.openssl_args, *self.speed_options, *decrypt), sampling.threads)
        # Each `openssl speed` run is its own process already: a "fork" is `rounds` more runs.
        rounds, forks = [], 0
        while sampling.wants_another_fork(rounds, forks):
            rounds += [openssl_cli.speed_round(command, env, sampling.threads) for _ in range(sampling.rounds)]
            forks += 1
        notes = [f"{self.work(op)}; {len(rounds)} runs of {seconds} s"
                 + (f", each of {sampling.threads} processes (-multi)" if sampling.threads > 1 else "")]
        if decrypt and op.mode == "cbc":
            notes.append(f"decrypts {op.message_bytes} bytes per operation; the JVM and pyca decrypt the "
                         f"padded ciphertext ({(op.message_bytes // 16 + 1) * 16} bytes)")
        return Measurement(
            engine=self.label, implementation=described["openssl_version"],
            setting=current().setting(accelerated), accelerated=accelerated, as_requested=as_requested,
            verified_state=state, **workload.row_fields(), summary=summarize(rounds, forks),
            details={"openssl_cpuinfo": described["cpuinfo"], "command": " ".join(command)},
            notes=notes,
        )


class OpensslAeadEngine(OpensslSpeedEngine):
    """`openssl speed -aead`: a further per-message reference for GCM encryption, TLS-like."""
    key, label, title = "openssl-aead", "OpenSSL speed -aead (C loop, per message)", "openssl speed -aead"
    shapes = ("message",)
    reference_rank = 2
    speed_options = ("-aead",)

    def unavailable(self, matrix) -> str | None:
        missing = super().unavailable(matrix)
        if missing:
            return missing
        said = subprocess.run([shutil.which(matrix.openssl), "speed", "-help"], capture_output=True, text=True)
        return None if "-aead" in said.stdout + said.stderr else f"`{matrix.openssl} speed` has no -aead"

    def jobs(self, workload, matrix, tag):
        op = workload.operation  # -aead times GCM encryption only; other operations get no rows from it
        return super().jobs(workload, matrix, tag) if (op.mode, op.direction) == ("gcm", "encrypt") else []

    def work(self, op: Operation) -> str:
        return (f"per {op.message_bytes}-byte message: EVP init, TLS's 13 bytes of AAD, update, final and tag "
                "(openssl speed -aead)")


def read_back(cpuinfo: str, accelerated: bool, cpu_has_aes: bool) -> tuple[bool, str]:
    """Whether OpenSSL's own CPU settings show the acceleration as asked, and those settings for the report."""
    try:
        in_use, shown = current().openssl_state(cpuinfo)
    except ValueError as e:
        return False, f"unknown ({e})"
    return in_use == (accelerated and cpu_has_aes), shown
