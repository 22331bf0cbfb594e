"""How close in time `openssl speed`'s AES-NI on and off runs must be for their ratio to be paired.

    python benchmarks/speed_pairing.py [--turns N]      # default 10 turns: about 4 minutes

compare's `openssl-cli` engine runs AES-NI on and off in turns (engines/native.py). Until
2026-12-05 each side's turn was one process of speed's own size list, a size's two runs about six
seconds apart; now each size's two runs are back to back. This runs both ways turn by turn, in a
fresh order each turn: "list" (the first) and "adjacent" (one `-bytes` process a run, a second
apart), and prints per size and way the spread of the turns' AES-NI speedups (the sd of their
logs, which Stein's rule squares to ask for forks), each side's spread and the two sides'
correlation within a turn.
"""
from __future__ import annotations

import math
import random
import shutil
import statistics

import _common

from jvmbridge.native.openssl_cli import speed_command, speed_rounds
from jvmbridge.platforms import current
from jvmbridge.sampling.workload import SPEED_SIZES
from jvmbridge.trust.launch import environment

CIPHER = "aes-256-cbc"


def figures(runs: dict[str, dict[int, list[float]]], size: int) -> dict:
    """For one size: the spread of the log speedups over turns, of each side's logs, their correlation."""
    on, off = ([math.log(ns) for ns in runs[side][size]] for side in ("on", "off"))
    speedups = [b - a for a, b in zip(on, off)]
    return {"size": size, "speedup_sd": statistics.stdev(speedups), "on_sd": statistics.stdev(on),
            "off_sd": statistics.stdev(off), "correlation": statistics.correlation(on, off) if len(on) > 2 else math.nan}


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("--turns", type=int, default=10, help="turns of each way (default 10)")
    args = parser.parse_args()
    _common.begin(args)
    sizes, turns = (SPEED_SIZES[:1], 2) if args.quick else (SPEED_SIZES, args.turns)
    openssl = shutil.which("openssl") or _common.skip(args, "an `openssl` command")
    envs = {side: current().openssl_environment(environment(), side == "on") for side in ("on", "off")}
    ways = {way: {side: {size: [] for size in sizes} for side in envs} for way in ("list", "adjacent")}

    def run(way: str, side: str, size: int | None) -> None:
        """One process: of ``size`` (-bytes), or (None) of speed's own list, as a user runs it (six
        seconds, well inside the deadline openssl_cli gives a run of one size)."""
        command = speed_command(openssl, CIPHER, size, 1) if size else [openssl, "speed", "-elapsed", "-mr",
                                                                        "-seconds", "1", "-evp", CIPHER]
        for measured, rounds in speed_rounds(command, envs[side]).items():
            if measured in sizes:
                ways[way][side][measured].append(rounds["ns"] / rounds["iterations"])

    for turn in range(turns):
        shuffled = random.Random(turn)
        for way in shuffled.sample(list(ways), 2):
            if way == "list":
                for side in shuffled.sample(list(envs), 2):
                    run(way, side, None if not args.quick else sizes[0])
                continue
            for size in shuffled.sample(list(sizes), len(sizes)):
                for side in shuffled.sample(list(envs), 2):
                    run(way, side, size)
        print(f"turn {turn + 1} of {turns}", flush=True)
    found = [{"way": way, **figures(runs, size)} for way, runs in ways.items() for size in sizes]
    print(f"\n{'way':<9} {'bytes':>6} {'speedup sd':>10} {'on sd':>7} {'off sd':>7} {'corr':>6}")
    for row in found:
        print(f"{row['way']:<9} {row['size']:>6} {row['speedup_sd']:>10.2%} {row['on_sd']:>7.2%} {row['off_sd']:>7.2%} "
              f"{row['correlation']:>+6.2f}")
    for way in ways:
        mean = statistics.fmean(row["speedup_sd"] for row in found if row["way"] == way)
        print(f"{way}: the speedups' spread {mean:.2%} on average over the sizes")
    _common.save(args, found)


if __name__ == "__main__":
    main()
