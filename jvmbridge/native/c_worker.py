"""Child process: the C loop (aesloop.c) through ctypes, in its own process so that OpenSSL reads
its CPU mask (OPENSSL_ia32cap, OPENSSL_armcap) from this child's environment when it loads."""
from __future__ import annotations

import ctypes
from pathlib import Path

from jvmbridge.child import Save, WorkerError, each_part, serve
from jvmbridge.measure import in_processes, round_counts, spare_rounds, timed_rounds, warm_up
from jvmbridge.native.c_loop import load
from jvmbridge.worker_protocol import MeasuredCPart


def handle(request: dict, save: Save) -> dict:
    library = load(Path(request["library"]))
    return each_part(request, lambda part: _measure(library, part),
                     {"openssl_version": library.aesloop_openssl_version().decode(),
                      "cpuinfo": library.aesloop_cpuinfo().decode()}, save)


def _measure(library, request: MeasuredCPart) -> dict:
    key, iv, data = (bytes.fromhex(request[k]) for k in ("key", "iv", "input"))
    stream, decrypt = request["shape"] == "stream", request["direction"] == "decrypt"
    out, out_len = ctypes.create_string_buffer(len(data) + 32), ctypes.c_int(0)

    def run(n: int) -> int:
        elapsed = library.aesloop_run(request["cipher"].encode(), stream, decrypt, key, iv, len(iv), data, len(data),
                                      n, out, ctypes.byref(out_len))
        if elapsed < 0:
            raise WorkerError(f"OpenSSL refused {request['cipher']} in the C loop")
        return elapsed

    run(1)
    first = out.raw[:out_len.value]  # one message (or update), before any timing
    threads = request["threads"]
    with in_processes(run, threads) as loop:  # several loops at once: forked copies, as openssl speed -multi
        warmup = warm_up(loop, request["warmup_min_seconds"], request["warmup_max_seconds"])
        counts = round_counts(request["iterations"], request["rounds"], request["round_seconds"], warmup.ns_per_op)
        rounds = timed_rounds(loop, counts, threads, spare=spare_rounds(request["iterations"], counts))
    return {"first": first.hex(),
            "last": out.raw[:out_len.value].hex(), "last_count": counts[-1],
            "warmup": warmup.as_dict(), "rounds": rounds}


if __name__ == "__main__":
    serve(handle)
