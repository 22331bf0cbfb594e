"""The C loop engine: the JVM's per-message work and speed's stream, timed in C against libcrypto."""
from __future__ import annotations

from jvmbridge.conductor.conduct import slices_by_fork, warmup_chunks
from jvmbridge.engines.native import WorkerEngine
from jvmbridge.forks.measure import merge_warmups
from jvmbridge.forks.protocol import CPart
from jvmbridge.native.c_loop import CLoopUnavailable, library_path
from jvmbridge.platforms import current
from jvmbridge.reference import encrypt_message, stream_output
from jvmbridge.results import Measurement
from jvmbridge.sampling.workload import Operation, Workload
from jvmbridge.stats.summary import summarize


class CLoopEngine(WorkerEngine):
    key, label, title = "c-loop", "OpenSSL C loop (jvmbridge)", "C loop"
    short_name = "OpenSSL C loop"
    reference_rank = 0  # the same work as the JVM's, so the JVM is held against it first
    reference_shapes = ("message",)  # AESNITester's per-message work in C (openssl speed has none for CBC)

    def unavailable(self, matrix) -> str | None:
        try:
            library_path()
        except CLoopUnavailable as e:
            return str(e)
        return None

    worker = "jvmbridge.native.c_worker"

    def child_request(self, workloads: list[Workload]) -> tuple[dict, list]:
        return {"library": str(library_path())}, [loop_part(w) for w in workloads]

    def measurement(self, workload, request, accelerated, outcomes, failed, read) -> Measurement:
        op, library = workload.operation, request["library"]
        as_requested, state = read
        result = outcomes[0].answer
        shape = ("EVP_CipherInit_ex (IV reset, key kept), Update, Final per message"
                 if op.shape == "message" else "EVP_CipherUpdate into one buffer, never finished")
        return Measurement(
            engine=self.label, implementation=result["openssl_version"], setting=current().setting(accelerated),
            accelerated=accelerated, as_requested=as_requested, verified_state=state, **workload.row_fields(),
            summary=summarize(slices_by_fork(outcomes), workload.sampling.first_stage, warmup_chunks(outcomes)),
            warmup=merge_warmups([o.warmup for o in outcomes]), fork_seconds=[o.seconds for o in outcomes],
            loop_bytes_checked=True, loop_bytes_error=bytes_error(op, op.loop_input(), result),
            details={"openssl_cpuinfo": result["cpuinfo"], "library": library},
            notes=[shape], failed_fork=failed.error if failed else None)


def loop_part(workload: Workload) -> CPart:
    """c_worker's request for ``workload``: its loop, the bytes per iteration, OpenSSL's cipher name."""
    return CPart(**workload.loop_request(), input=workload.operation.loop_input().hex(),
                 cipher=workload.operation.cipher_name)


def bytes_error(op: Operation, data: bytes, result: dict) -> str | None:
    """Where the loop's first (and per message, last) output differs from pyca's for the same work."""
    decrypt = op.direction == "decrypt"
    if op.shape == "stream":
        checks = [("the first update", result["first"], stream_output(op.key, op.iv, data, 1, op.mode, decrypt))]
    else:
        def expected(index: int) -> bytes:  # GCM encryption steps its nonce once per message
            iv = op.iv
            if op.mode == "gcm" and not decrypt:
                iv = iv[:-4] + ((int.from_bytes(iv[-4:], "big") + index) % 2**32).to_bytes(4, "big")
            return op.plaintext if decrypt else encrypt_message(op.key, iv, op.plaintext, op.mode)
        checks = [("the first message", result["first"], expected(0)),
                  ("the last timed message", result["last"], expected(result["last_count"] - 1))]
    for what, actual, want in checks:
        if bytes.fromhex(actual) != want:
            return f"{what} differs from OpenSSL through pyca"
    return None
