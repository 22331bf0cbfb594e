"""Where the C loop's fork-to-fork levels come from: the same loop in fresh processes, with the
kernel's address-space layout randomization (ASLR) as every process has it, without it
(personality ADDR_NO_RANDOMIZE, as `setarch -R`), and without it and with Python's hash seed
fixed too (PYTHONHASHSEED=0: the same allocations in the same order), in turns.

Each process loads compare's C loop (jvmbridge/native/aesloop.c on the system's libcrypto) and
times its 38-byte AES-256-CBC messages with AES-NI (a fresh EVP_CIPHER_CTX per run, IV reset, key
kept, update and final per message, as compare's message rows): the fastest of its rounds, as a
fork's lower quartile keeps its fast end. Printed per arm: the processes' range, spread and how
many ran more than 3% slower than the arm's median (a level of their own).

    python benchmarks/c_layout.py [processes per arm, default 24]
"""
from __future__ import annotations

import ctypes
import os
import statistics
import subprocess
import sys

import _common

ADDR_NO_RANDOMIZE = 0x0040000  # linux/personality.h
ROUNDS, MESSAGES = 8, 300_000
QUICK_ROUNDS, QUICK_MESSAGES = 2, 20_000
SLOW = 1.03  # above the arm's median by more: a process at a level of its own


def one_process(rounds: int, messages: int) -> None:
    """In the child: the C loop's best ns/op, printed."""
    from jvmbridge.native.c_loop import library_path, load

    library = load(library_path())
    key, iv, data = bytes(range(32)), bytes(16), bytes(38)
    out, out_len = ctypes.create_string_buffer(len(data) + 32), ctypes.c_int(0)
    best = min(library.aesloop_run(b"aes-256-cbc", 0, 0, key, iv, len(iv), data, len(data), messages, out,
                                   ctypes.byref(out_len)) / messages for _ in range(rounds))
    print(best)


def _no_randomization() -> None:
    """In the child before exec: its address space laid out the same in every process."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.personality(ADDR_NO_RANDOMIZE)


ARMS = {"ASLR on": (True, None), "ASLR off": (False, None), "ASLR off, seed 0": (False, "0")}


def fork(arm: str, rounds: int, messages: int) -> float:
    randomized, seed = ARMS[arm]
    env = {**os.environ, "PYTHONHASHSEED": seed} if seed else None
    done = subprocess.run([sys.executable, __file__, "--child", str(rounds), str(messages)], capture_output=True,
                          text=True, check=True, env=env, preexec_fn=None if randomized else _no_randomization)
    return float(done.stdout)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return one_process(int(sys.argv[2]), int(sys.argv[3]))
    parser = _common.parser(__doc__)
    parser.add_argument("processes", nargs="?", type=int, default=24, help="processes per arm (default 24)")
    args = parser.parse_args()
    _common.begin(args)
    count, rounds, messages = (3, QUICK_ROUNDS, QUICK_MESSAGES) if args.quick else (args.processes, ROUNDS, MESSAGES)
    arms: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for _ in range(count):  # in turns: a busy spell of the machine falls on every arm
        for arm, figures in arms.items():
            figures.append(fork(arm, rounds, messages))
    figures = {}
    for arm, values in arms.items():
        median = statistics.median(values)
        slow = sum(value > SLOW * median for value in values)
        spread = statistics.stdev(values) / statistics.fmean(values) if len(values) > 1 else float("nan")
        figures[arm] = {"ns_per_op": values, "median": median, "spread": spread, "slow": slow}
        print(f"{arm:16} {len(values)} processes: {min(values):.1f}-{max(values):.1f} ns/op, median {median:.1f}, "
              f"spread {spread:.2%}, {slow} more than {SLOW - 1:.0%} slower than the median")
    _common.save(args, figures)


if __name__ == "__main__":
    main()
