"""Worker process for the conductor: `openssl speed -evp` per part, AES-NI as the environment sets it.
A slice is its own speed process stopped by its alarm (speed cannot run exactly n), as long as n took
at warm-up speed; whole-run parts (-multi, large sizes) run `whole_seconds` a slice."""
from __future__ import annotations

import os
import time

from jvmbridge.conductor.slices import Loop, Opened, serve
from jvmbridge.forks.measure import Counted, Warmup
from jvmbridge.forks.parent import WorkerError
from jvmbridge.native import openssl_cli

# Before a part's speed is known: longer than the process's start (5 ms here).
FIRST_SECONDS = 0.01


def open_loops(request: dict) -> Opened:
    described = openssl_cli.describe(request["openssl"], dict(os.environ))
    others = os.sched_getaffinity(0) - {request.get("measuring_cpu")}
    return described, [_whole(request, part) if "whole_seconds" in part else _loop(request, part, others)
                       for part in request["parts"]]


def _whole(request: dict, part: dict) -> Loop:
    """A part whose slices are whole runs of ``whole_seconds`` in ``threads`` processes (-multi)."""
    command = openssl_cli.speed_command(request["openssl"], part["cipher"], part["message_bytes"],
                                        part["whole_seconds"], tuple(part["extra"]), part["threads"])

    def run(n: int) -> Counted:
        done = openssl_cli.speed_rounds(command, dict(os.environ), part["threads"])
        if part["message_bytes"] not in done:
            raise WorkerError(f"`{' '.join(command)}` gave no figure for {part['message_bytes']} bytes")
        figure = done[part["message_bytes"]]
        counters = {k: v for k, v in figure.items() if k not in ("iterations", "ns")}
        return Counted(operations=figure["iterations"], ns=figure["ns"], counters=counters)

    def warm(min_seconds: float, max_seconds: float) -> Warmup:
        """None: a run's first operations are its own."""
        return Warmup(iterations=0, seconds=0.0, steady=True, ns_per_op=part["whole_seconds"] * 1e9, chunks=[])

    return Loop(run=run, evidence=lambda: {"command": " ".join(command)}, warm=warm)


def _loop(request: dict, part: dict, others: set[int]) -> Loop:
    ns_per_op = [0.0]  # the speed of the part's warm-up, which the conductor sized its slices by
    commands: list[str] = []

    def run(n: int) -> Counted:
        seconds = max(FIRST_SECONDS, n * ns_per_op[0] / 1e9)
        command = openssl_cli.speed_command(request["openssl"], part["cipher"], part["message_bytes"],
                                            openssl_cli.seconds_beyond(seconds), tuple(part["extra"]))
        # On the measuring vCPU (a slice), this thread waits for the loop on the others.
        measuring = os.sched_getaffinity(0) == {request.get("measuring_cpu")}
        done = openssl_cli.stopped_run(command, seconds, others if measuring and others else None)
        shown = " ".join(command)
        if shown not in commands:
            commands.append(shown)
        return done

    def warm(min_seconds: float, max_seconds: float) -> Warmup:
        """One short run to size slices: each slice is its own process, so nothing settles across
        them (warming until five runs agreed cost 0.3-0.6 s a fork)."""
        started = time.perf_counter()
        done = run(0)
        ns_per_op[0] = done.ns / max(done.operations, 1)
        return Warmup(iterations=done.operations, seconds=time.perf_counter() - started, steady=True,
                      ns_per_op=ns_per_op[0], chunks=[])

    return Loop(run=run, evidence=lambda: {"command": " ; ".join(commands)}, warm=warm)


if __name__ == "__main__":
    serve(open_loops)
