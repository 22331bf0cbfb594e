"""Does a slice of `openssl speed` (a process stopped by SIGALRM after 50 ms, timed by jvmbridge)
measure what `openssl speed`'s own whole-second run measures?

    python benchmarks/speed_slices.py [--turns N]      # default 5 turns: about 2 minutes

compare runs `openssl speed` in the conductor's slices (native/speed_worker.py): each slice a
process of its own, stopped with the signal of its own alarm when its time is up, its operations
over the time from its start line to the signal. In turns, per size and AES-NI setting, in an
order drawn each turn: one run of 1 s as `openssl speed` times it itself (its clock counts 10 ms
ticks) and 20 slices of 50 ms on the measuring vCPU, compare's slices. Printed: the slices'
median and lower quartile against the whole second's figure (median over turns), and how long a
slice's window holds something other than its loop (the key set-up after its start line): from
runs of 25 and 200 ms in pairs, the time a run's operations do not account for at the longer
runs' speed.
"""
from __future__ import annotations

import os
import random
import shutil
import statistics

import _common

from jvmbridge.comparison.interleaved import measuring_cpu
from jvmbridge.native.openssl_cli import seconds_beyond, speed_command, speed_rounds, stopped_run
from jvmbridge.platforms import current
from jvmbridge.trust.launch import environment

CIPHER = "aes-256-cbc"
SLICE_SECONDS = 0.05


def slices(openssl: str, size: int, count: int, seconds: float = SLICE_SECONDS) -> list:
    """``count`` stopped runs as compare's worker makes them: on this thread's vCPU, waited for on the others."""
    others = os.sched_getaffinity(0) - {measuring_cpu()}
    command = speed_command(openssl, CIPHER, size, seconds_beyond(seconds))
    return [stopped_run(command, seconds, others or None) for _ in range(count)]


def set_up_us(openssl: str, size: int, pairs: int) -> float:
    """Median over ``pairs`` of the microseconds a 25 ms run's window holds beyond its operations,
    at the speed a 200 ms run beside it had."""
    found = []
    for _ in range(pairs):
        (short,), (long,) = slices(openssl, size, 1, 0.025), slices(openssl, size, 1, 0.2)
        rate = (long.operations - short.operations) / (long.ns - short.ns)
        found.append((short.ns - short.operations / rate) / 1e3)
    return statistics.median(found)


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("--turns", type=int, default=5, help="turns of each size and setting (default 5)")
    args = parser.parse_args()
    _common.begin(args)
    sizes, turns, count, pairs = ([16], 1, 3, 2) if args.quick else ([16, 1024, 8192], args.turns, 20, 10)
    openssl = shutil.which("openssl") or _common.skip(args, "an `openssl` command")
    measuring = measuring_cpu()
    if measuring is not None:
        os.sched_setaffinity(0, {measuring})  # as a worker's measuring thread: its runs inherit the vCPU
    envs = {side: current().openssl_environment(environment(), side == "on") for side in ("on", "off")}
    cases = [(size, side) for size in sizes for side in envs]
    ratios: dict[tuple, dict[str, list[float]]] = {case: {"median": [], "quartile": []} for case in cases}
    for turn in range(turns):
        for size, side in random.Random(f"{turn}/cases").sample(cases, len(cases)):
            os.environ.clear()
            os.environ.update(envs[side])
            whole = speed_rounds(speed_command(openssl, CIPHER, size, 1), envs[side])[size]
            per_op = sorted(run.ns / run.operations for run in slices(openssl, size, count))
            ratios[size, side]["median"].append(statistics.median(per_op) / (whole["ns"] / whole["iterations"]))
            ratios[size, side]["quartile"].append(statistics.quantiles(per_op, n=4)[0] / (whole["ns"] / whole["iterations"]))
    figures = []
    print(f"{turns} turn(s); a slice's ns/op against a whole second's, median over turns:")
    print(f"{'size':>6} {'AES-NI':>6} {'slices median':>14} {'lower quartile':>15} {'set-up (us)':>12}")
    for size, side in cases:
        os.environ.clear()
        os.environ.update(envs[side])
        row = {"size": size, "aes_ni": side, "median_ratio": statistics.median(ratios[size, side]["median"]),
               "quartile_ratio": statistics.median(ratios[size, side]["quartile"]),
               "set_up_us": set_up_us(openssl, size, pairs)}
        figures.append(row)
        print(f"{size:>6} {side:>6} {row['median_ratio']:>14.4f} {row['quartile_ratio']:>15.4f} {row['set_up_us']:>12.0f}")
    _common.save(args, figures)


if __name__ == "__main__":
    main()
