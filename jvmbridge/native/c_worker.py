"""Child process: the C loop (aesloop.c) through ctypes, in its own process so that OpenSSL reads
its CPU mask (OPENSSL_ia32cap, OPENSSL_armcap) from this child's environment when it loads."""
from __future__ import annotations

import ctypes
from pathlib import Path

from jvmbridge.conductor.slices import Loop
from jvmbridge.forks.measure import in_processes, round_counts, spare_rounds, timed_rounds, warm_up
from jvmbridge.forks.parent import WorkerError
from jvmbridge.forks.protocol import CPart, MeasuredCPart
from jvmbridge.forks.worker import Save, each_part, serve
from jvmbridge.native.c_loop import load


def handle(request: dict, save: Save) -> dict:
    library = load(Path(request["library"]))
    return each_part(request, lambda part: _measure(library, part),
                     {"openssl_version": library.aesloop_openssl_version().decode(),
                      "cpuinfo": library.aesloop_cpuinfo().decode()}, save)


def loop(library, request: CPart) -> Loop:
    """The C loop of ``request``'s work, and its evidence: the first message (or update), before
    any timing, and the last of the latest run."""
    key, iv, data = (bytes.fromhex(request[k]) for k in ("key", "iv", "input"))
    stream, decrypt = request["shape"] == "stream", request["direction"] == "decrypt"
    out, out_len = ctypes.create_string_buffer(len(data) + 32), ctypes.c_int(0)
    last_count = [1]

    def run(n: int) -> int:
        elapsed = library.aesloop_run(request["cipher"].encode(), stream, decrypt, key, iv, len(iv), data, len(data),
                                      n, out, ctypes.byref(out_len))
        if elapsed < 0:
            raise WorkerError(f"OpenSSL refused {request['cipher']} in the C loop")
        last_count[0] = n
        return elapsed

    run(1)
    first = out.raw[:out_len.value].hex()

    def evidence() -> dict:
        return {"first": first, "last": out.raw[:out_len.value].hex(), "last_count": last_count[0]}

    return Loop(run=run, evidence=evidence)


def _measure(library, request: MeasuredCPart) -> dict:
    c_loop = loop(library, request)
    threads = request["threads"]
    with in_processes(c_loop.run, threads) as run:  # several loops at once: forked copies, as openssl speed -multi
        warmup = warm_up(run, request["warmup_min_seconds"], request["warmup_max_seconds"])
        counts = round_counts(request["iterations"], request["rounds"], request["round_seconds"], warmup.ns_per_op)
        rounds = timed_rounds(run, counts, threads, spare=spare_rounds(request["iterations"], counts))
    return {**c_loop.evidence(), "last_count": counts[-1], "warmup": warmup.as_dict(), "rounds": rounds}


if __name__ == "__main__":
    serve(handle)
