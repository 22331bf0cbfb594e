"""The native engines, AES acceleration on and off: pyca's OpenSSL in Python, `openssl speed`'s C loop."""
from __future__ import annotations

import os
import shutil
from typing import Callable

from jvmbridge.conductor.conduct import Forked, slices_by_fork, warmup_chunks
from jvmbridge.engines.base import Engine, Sliced
from jvmbridge.forks.measure import merge_warmups
from jvmbridge.forks.parent import ChildOutcome
from jvmbridge.forks.protocol import PycaPart
from jvmbridge.host.cpu import cpu_info, lacks
from jvmbridge.platforms import current
from jvmbridge.results import Measurement
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import Operation, Workload
from jvmbridge.stats.summary import summarize
from jvmbridge.trust.launch import environment, run

# No JIT to wait for; a short warm-up settles caches and the allocator.
NATIVE_WARMUP = {"warmup_min_seconds": 0.2, "warmup_max_seconds": 3.0}
SETTINGS = (True, False)  # acceleration on, then off: the order of a native engine's rows
# The largest message run in slices: 66 us an operation with AES-NI off, a tenth of a percent of a
# 50 ms slice (the operation under way is counted whole).
SLICED_BYTES = 16384


class NativeEngine(Engine):
    """An engine over OpenSSL, measured with the CPU's AES acceleration on and then masked off."""
    accelerator = current().accelerator
    title = ""  # the start of its job labels
    fork_overhead_seconds = 0.3  # a worker's start and warm-up, as benchmarks/eta.py measures it

    worker = ""  # the module its conductor workers run (conductor.slices)

    def settings_sliced(self, workloads: list[tuple[Workload, str]], request: dict,
                        row: Callable[[Workload, bool, list[Forked], ChildOutcome | None, tuple[bool, str]],
                                      Measurement], whole_runs: bool = False) -> list[Sliced]:
        """Acceleration on and off as two workers of ``worker`` asked ``request``; ``row`` makes a row."""
        cpu_has_aes = not lacks(cpu_info()["features"], current().aes_feature)
        found = []
        for on in SETTINGS:
            def measurement(workload, outcomes, failed, on=on) -> Measurement:
                return row(workload, on, outcomes, failed, read_back(outcomes[0].answer["cpuinfo"], on, cpu_has_aes))

            found.append(Sliced(name=f"{self.title}, {current().setting(on)}", subject=self.title, accelerated=on,
                                module=self.worker, request=request, workloads=list(workloads),
                                measurement=measurement, warmup_min_seconds=NATIVE_WARMUP["warmup_min_seconds"],
                                warmup_max_seconds=NATIVE_WARMUP["warmup_max_seconds"],
                                env=current().openssl_environment(environment(), on), whole_runs=whole_runs))
        return found


class WorkerEngine(NativeEngine):
    """A native engine whose loop runs in its worker."""

    def child_request(self, workloads: list[Workload]) -> tuple[dict, list]:
        """What every worker is asked, and each workload's part of it."""
        raise NotImplementedError

    def measurement(self, workload: Workload, request: dict, accelerated: bool, outcomes: list[Forked],
                    failed: ChildOutcome | None, read: tuple[bool, str]) -> Measurement:
        """One workload's row in one setting from its finished forks (``read``: OpenSSL's state)."""
        raise NotImplementedError

    def sliced(self, workloads: list[tuple[Workload, str]], matrix) -> list[Sliced]:
        request, parts = self.child_request([workload for workload, _ in workloads])
        return self.settings_sliced(workloads, {**request, "parts": parts},
                                    lambda workload, on, outcomes, failed, read:
                                    self.measurement(workload, request, on, outcomes, failed, read))


class PycaEngine(WorkerEngine):
    key, label, title = "pyca", "OpenSSL via pyca (Python loop)", "OpenSSL via pyca"
    short_name = "OpenSSL via pyca"
    default = False  # mostly Python's own cost at AESNITester's size: --engine pyca
    reference_rank = 3
    wraps, overhead = "openssl-cli", "Python"  # the same library's C loop: how much of a message is Python

    worker = "jvmbridge.native.pyca_worker"

    def child_request(self, workloads: list[Workload]) -> tuple[dict, list]:
        return {}, [PycaPart(**w.loop_request(), mode=w.operation.mode, input=w.operation.loop_input().hex())
                               for w in workloads]

    def measurement(self, workload, request, accelerated, outcomes, failed, read) -> Measurement:
        op, sampling = workload.operation, workload.sampling
        as_requested, state = read
        result = outcomes[0].answer
        summary = summarize(slices_by_fork(outcomes), sampling.first_stage, warmup_chunks(outcomes))
        notes = ["fresh encryptor (and padder for CBC) per message; includes Python call overhead"
                 if op.shape == "message"
                 else "update_into on one encryptor; includes Python call overhead"]
        asked = (sampling.fork_iterations or 0) * sampling.threads * len(outcomes)
        if summary.iterations < asked:
            notes.append(f"ran {summary.iterations:,} of {asked:,} messages (time budget)")
        return Measurement(
            engine=self.label, implementation=f"{result['library']}, {result['openssl_version']}",
            setting=current().setting(accelerated), accelerated=accelerated, as_requested=as_requested,
            verified_state=state, **workload.row_fields(), summary=summary,
            warmup=merge_warmups([o.warmup for o in outcomes]), fork_seconds=[o.seconds for o in outcomes],
            ciphertext=result["ciphertext"], details={"openssl_cpuinfo": result["cpuinfo"]}, notes=notes, failed_fork=failed.error if failed else None,
        )


class OpensslSpeedEngine(NativeEngine):
    runs_a_count = False
    key, label, title = "openssl-cli", "OpenSSL speed (C loop)", "openssl speed"
    short_name = "openssl speed"
    shapes = ("stream",)
    reference_rank = 1
    # The figure people know for a stream: the JVM's stream is paired against it slice by slice.
    reference_shapes: tuple[str, ...] = ("stream",)
    speed_options: tuple[str, ...] = ()  # what this engine adds to `openssl speed`
    worker = "jvmbridge.native.speed_worker"

    def work(self, op: Operation) -> str:
        """What one operation of its loop does, for the row's note."""
        return (f"EVP_{op.direction.capitalize()}Update on a {op.message_bytes}-byte buffer, "
                "no per-message init or padding")

    def unavailable(self, matrix) -> str | None:
        if not (matrix.openssl and shutil.which(matrix.openssl)):
            return f"no `{matrix.openssl or 'openssl'}` command (--openssl PATH)"
        return None

    fork_overhead_seconds = 0.05  # an openssl process's start, as benchmarks/eta.py measures it

    def timed_seconds(self, sampling: Sampling) -> float:
        return max(1, round(sampling.round_seconds))  # a run is one round of whole seconds (_SpeedRuns)

    def budget(self, sampling: Sampling) -> str:
        # It counts what it did in whole seconds: neither --iterations nor --rounds.
        counted = " (it cannot run a given count)" if sampling.iterations else ""
        multi = f" of {sampling.threads} processes (-multi)" if sampling.threads > 1 else ""
        return f"a run{multi} of {self.timed_seconds(sampling):g} s per fork{counted}, {sampling.forks_budget()}"

    def implementation_text(self, row) -> str:
        """`openssl version`'s line, less a "(Library: ...)" naming the same version."""
        command, _, library = row.implementation.partition(" (Library: ")
        return command if library == f"{command})" else row.implementation

    def origin(self, row) -> str | None:
        command = getattr(row, "command", None)
        return command.split()[0] if isinstance(command, str) else None

    def slices(self, workloads, matrix) -> bool:
        # A slice runs for a time: whole runs for --iterations, messages large against a slice (the
        # one under way counts whole), -multi (its parent has no alarm) and --no-interleave.
        return not (any(w.sampling.iterations or w.sampling.threads > 1 or w.operation.message_bytes > SLICED_BYTES
                        for w in workloads) or "-multi" in matrix.openssl_args or not matrix.interleaved)

    def sliced(self, workloads: list[tuple[Workload, str]], matrix) -> list[Sliced]:
        whole = not self.slices([workload for workload, _ in workloads], matrix)
        # A whole run: its own `openssl speed` process for whole seconds (-multi: --threads processes).
        parts = [{"cipher": w.operation.cipher_name, "message_bytes": w.operation.message_bytes,
                  "extra": list(self._extra(w.operation, matrix)), "threads": w.sampling.threads,
                  **({"whole_seconds": self.timed_seconds(w.sampling)} if whole else {})} for w, _ in workloads]

        def row(workload, on, outcomes, failed, read) -> Measurement:
            sampling = workload.sampling
            multi = f", each of {sampling.threads} processes (-multi)" if sampling.threads > 1 else ""
            # Why, and what its set-up weighs: docs/method.md, benchmarks/speed_slices.py.
            how = (f"{len(outcomes)} run(s) of {self.timed_seconds(sampling)} s, each its own process: a fork of one round"
                   f"{multi}" if whole else "a process per slice, timed from start line to SIGALRM, set-up included")
            return self._row(workload, outcomes[0].answer, on, read, matrix.openssl_args,
                             summarize(slices_by_fork(outcomes), sampling.first_stage, warmup_chunks(outcomes)),
                             command=outcomes[-1].answer["command"], how=how,
                             warmup=merge_warmups([o.warmup for o in outcomes]),
                             fork_seconds=[o.seconds for o in outcomes], failed=failed.error if failed else None)

        openssl = os.path.abspath(shutil.which(matrix.openssl) or matrix.openssl)
        return self.settings_sliced(workloads, {"openssl": openssl, "parts": parts}, row, whole_runs=whole)

    def _extra(self, op: Operation, matrix) -> tuple[str, ...]:
        """What a run adds before -evp: the user's, this engine's, the direction."""
        return (*matrix.openssl_args, *self.speed_options, *(("-decrypt",) if op.direction == "decrypt" else ()))

    def _row(self, workload: Workload, described: dict, accelerated: bool, read: tuple[bool, str],
             openssl_args: tuple[str, ...], summary, command: str, how: str, failed: str | None,
             **measured) -> Measurement:
        """A row of ``workload`` in one setting; ``how``: how its runs were made."""
        op = workload.operation
        notes = [self.work(op), how]  # apart: rows of every size share the second, said once
        if op.direction == "decrypt" and op.mode == "cbc":
            notes.append(f"decrypts {op.message_bytes} bytes per operation; the JVM and pyca decrypt the "
                         f"padded ciphertext ({(op.message_bytes // 16 + 1) * 16} bytes)")
        as_requested, state = read
        return Measurement(
            engine=self.label, implementation=described["openssl_version"],
            setting=current().setting(accelerated), accelerated=accelerated, as_requested=as_requested,
            verified_state=state, **workload.row_fields(), summary=summary,
            details={"openssl_cpuinfo": described["cpuinfo"], "command": command,
                     # --openssl-arg makes a configuration of its own.
                     **({"openssl_args": " ".join(openssl_args)} if openssl_args else {})},
            notes=notes, failed_fork=failed, **measured,
        )


class OpensslAeadEngine(OpensslSpeedEngine):
    """`openssl speed -aead`: a further per-message reference for GCM encryption, TLS-like."""
    key, label, title = "openssl-aead", "OpenSSL speed -aead (C loop, per message)", "openssl speed -aead"
    short_name = "openssl speed -aead"
    default = False
    shapes = ("message",)
    reference_rank = 2
    reference_shapes = ()  # GCM's messages stay with the C loop first
    speed_options = ("-aead",)

    def unavailable(self, matrix) -> str | None:
        missing = super().unavailable(matrix)
        if missing:
            return missing
        said = run([shutil.which(matrix.openssl), "speed", "-help"], capture_output=True, text=True)
        return None if "-aead" in said.stdout + said.stderr else f"`{matrix.openssl} speed` has no -aead"

    def sliced(self, workloads, matrix):
        encrypting = _gcm_encrypting(workloads)
        return super().sliced(encrypting, matrix) if encrypting else []

    def work(self, op: Operation) -> str:
        return (f"per {op.message_bytes}-byte message: EVP init, TLS's 13 bytes of AAD, update, final and tag "
                "(openssl speed -aead)")


def _gcm_encrypting(workloads: list[tuple[Workload, str]]) -> list[tuple[Workload, str]]:
    """The workloads `openssl speed -aead` times: GCM encryption only."""
    return [(w, tag) for w, tag in workloads if (w.operation.mode, w.operation.direction) == ("gcm", "encrypt")]


def read_back(cpuinfo: str, accelerated: bool, cpu_has_aes: bool) -> tuple[bool, str]:
    """Whether OpenSSL's CPU settings show the acceleration as asked, and those settings."""
    try:
        in_use, shown = current().openssl_state(cpuinfo)
    except ValueError as e:
        return False, f"unknown ({e})"
    return in_use == (accelerated and cpu_has_aes), shown
