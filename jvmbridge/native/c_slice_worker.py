"""Worker process for the conductor: the C loop (aesloop.c) of each part, OpenSSL's CPU mask read
from this process's environment as it loads (AES-NI on or off), timed a slice at a time when told
(conductor.slices)."""
from __future__ import annotations

from pathlib import Path
from typing import cast

from jvmbridge.conductor.slices import Opened, serve
from jvmbridge.forks.protocol import CPart
from jvmbridge.native.c_loop import load
from jvmbridge.native.c_worker import loop


def open_loops(request: dict) -> Opened:
    library = load(Path(request["library"]))
    return ({"openssl_version": library.aesloop_openssl_version().decode(), "cpuinfo": library.aesloop_cpuinfo().decode()},
            [loop(library, cast(CPart, part)) for part in request["parts"]])


if __name__ == "__main__":
    serve(open_loops)
