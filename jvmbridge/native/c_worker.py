"""Worker process for the conductor: the C loop through ctypes, in its own process for its CPU mask."""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import cast

from jvmbridge.conductor.slices import Loop, Opened, copies, serve
from jvmbridge.forks.parent import WorkerError
from jvmbridge.forks.protocol import CPart
from jvmbridge.native.c_loop import load


def open_loops(request: dict) -> Opened:
    library = load(Path(request["library"]))
    return ({"openssl_version": library.aesloop_openssl_version().decode(), "cpuinfo": library.aesloop_cpuinfo().decode()},
            [copies(loop(library, cast(CPart, part)), part["threads"]) for part in request["parts"]])


def loop(library, request: CPart) -> Loop:
    """The C loop of ``request``'s work, with its first output (before timing) and latest last as evidence."""
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


if __name__ == "__main__":
    serve(open_loops)
