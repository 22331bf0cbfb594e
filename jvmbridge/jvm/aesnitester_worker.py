"""Worker process for the conductor: AESNITester's whole run, a fresh `java` per slice running the
request's message count and timing itself from main's start (the run is the unit, whatever n)."""
from __future__ import annotations

import subprocess
import sys

from jvmbridge.conductor.slices import Loop, Opened, serve
from jvmbridge.forks.measure import Counted, Warmup
from jvmbridge.forks.parent import WorkerError
from jvmbridge.trust.launch import run


def open_loops(request: dict) -> Opened:
    return {}, [_loop(part) for part in request["parts"]]


def _loop(part: dict) -> Loop:
    said: dict = {}

    def run_once(n: int) -> Counted:
        if "refused" in part:
            raise WorkerError(part["refused"])
        try:
            done = run(part["command"], capture_output=True, text=True, errors="replace", timeout=part["seconds"])
        except subprocess.TimeoutExpired:
            raise WorkerError(f"no answer within {part['seconds']:.0f} s (the deadline its budget gives): stopped") from None
        if done.returncode != 0:
            print(done.stdout, done.stderr, sep="\n", file=sys.stdout, flush=True)  # its crash, for the parent to read
            raise WorkerError(f"java exited with status {done.returncode}")
        said.update(fields(done.stdout))
        return Counted(operations=part["iterations"], ns=int(said["elapsed_ns"]), counters={})

    def warm(min_seconds: float, max_seconds: float) -> Warmup:
        """None: the run times its own start, which is what it measures."""
        return Warmup(iterations=0, seconds=0.0, steady=True, ns_per_op=part["seconds"] * 1e9 / 10, chunks=[])

    return Loop(run=run_once, evidence=lambda: dict(said), warm=warm)


def fields(stdout: str) -> dict:
    """The harness's "KEY VALUE..." lines: elapsed_ns, output, provider, property ..., flag ..."""
    found: dict = {"flags": {}}
    for line in stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "flag":
            name, value, origin = rest.split(" ", 2)
            found["flags"][name] = (value, origin)
        elif kind == "property":
            name, _, value = rest.partition(" ")
            found[name] = value
        elif kind in ("elapsed_ns", "output", "provider"):
            found[kind] = rest
    return found


if __name__ == "__main__":
    serve(open_loops)
