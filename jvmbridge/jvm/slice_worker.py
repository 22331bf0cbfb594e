"""Worker process for the conductor: one JVM (started through JPype with one setting's flags),
each of its parts' harness loops, timed a slice at a time when told (conductor.slices)."""
from __future__ import annotations

from typing import cast

from jvmbridge.conductor.slices import Opened, serve
from jvmbridge.forks.protocol import JvmPart, JvmRequest
from jvmbridge.jvm.worker import Jvm

# JPype's reference queue, a Java thread it starts in every JVM it drives ("Python Reference Queue",
# cut to 15 characters in /proc): the harness's, not the measured code's. Free on every vCPU, it runs
# on the measuring one whenever the other is busy, the most of any thread but the loops (a scheduler trace).
HARNESS_THREADS = ("Python Referenc",)


def open_loops(request: dict) -> Opened:
    jvm = Jvm(cast(JvmRequest, request))
    return {"jvm": jvm.identity, "flags": jvm.flags}, [jvm.loop(cast(JvmPart, part)) for part in request["parts"]]


if __name__ == "__main__":
    serve(open_loops, HARNESS_THREADS)
