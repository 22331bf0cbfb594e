"""Can a fork average the C loop's layouts away inside one process? benchmarks/c_layout.py found a
process's level in its address-space layout (decision 0013). Here each process times compare's C
loop (38-byte AES-256-CBC messages, AES-NI as the host has it) two ways, in turns:

- placed as compare's worker places it (buffers where Python put them, the stack where it is);
- each slice at a placement of its own, drawn at random: the input and output buffers at any
  16-byte offset in a page, the stack moved down by 16-4096 bytes (as Stabilizer re-randomizes a
  layout, though here the cipher context and the code stay where they are).

Each way's figure is the lower quartile of its slices (each the best of a few rounds), as a fork's
is. Printed per way: the processes' spread and how many ran more than 3% slower than the median;
then how closely a process's two figures follow each other. Were a process's level in these
placements, the second would spread less, and not follow the first.

    python benchmarks/c_placement.py [processes, default 20]
"""
from __future__ import annotations

import ctypes
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _common

ROUNDS, MESSAGES, PLACEMENTS = 3, 60_000, 20
QUICK_ROUNDS, QUICK_MESSAGES, QUICK_PLACEMENTS = 1, 2_000, 4
PAGE = 4096
SLOW = 1.03  # above the way's median by more: a process at a level of its own (as c_layout.py)

# compare's C loop, called below a stack moved down by `pad` bytes.
_PLACED = """#include <alloca.h>
#include "{source}"
int64_t placed_run(int pad, const char *cipher, int stream, int decrypt, const unsigned char *key,
                   const unsigned char *iv, int iv_len, const unsigned char *in, int in_len, int64_t n,
                   unsigned char *out, int *out_len) {{
    volatile char *moved = alloca(pad + 1);
    moved[0] = 0;
    return aesloop_run(cipher, stream, decrypt, key, iv, iv_len, in, in_len, n, out, out_len);
}}
"""


def build(folder: Path) -> Path | None:
    """The placed loop as a shared library in ``folder``; None without a C compiler and libcrypto's headers."""
    from jvmbridge.native.c_loop import SOURCE

    compiler = shutil.which(os.environ.get("CC") or "cc") or shutil.which("gcc")
    source, library = folder / "placed.c", folder / "placed.so"
    source.write_text(_PLACED.format(source=SOURCE))
    if not compiler or subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(library), str(source),
                                       "-lcrypto"], capture_output=True).returncode:
        return None
    return library


def one_process(library: str, rounds: int, messages: int, placements: int) -> None:
    """In the child: its figure placed as compare's worker places it, and shuffled; printed."""
    placed = ctypes.CDLL(library)
    placed.placed_run.restype = ctypes.c_int64
    placed.placed_run.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                  ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int64,
                                  ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    key, iv, data = bytes(range(32)), bytes(16), bytes(38)
    given, given_out = ctypes.create_string_buffer(data), ctypes.create_string_buffer(len(data) + 32)
    spare_in, spare_out = ctypes.create_string_buffer(2 * PAGE), ctypes.create_string_buffer(2 * PAGE)
    written = ctypes.c_int(0)

    def best(pad: int, into: int, out: int) -> float:
        return min(placed.placed_run(pad, b"aes-256-cbc", 0, 0, key, iv, len(iv), into, len(data), messages, out,
                                     ctypes.byref(written)) / messages for _ in range(rounds))

    draw = random.Random()
    as_given, shuffled = [], []
    for _ in range(placements):  # in turns: a busy spell falls on both ways
        as_given.append(best(0, ctypes.addressof(given), ctypes.addressof(given_out)))
        shuffled.append(best(draw.randrange(0, PAGE, 16), ctypes.addressof(spare_in) + draw.randrange(0, PAGE, 16),
                             ctypes.addressof(spare_out) + draw.randrange(0, PAGE, 16)))
    print(lower_quartile(as_given), lower_quartile(shuffled), min(shuffled), max(shuffled))


def lower_quartile(values: list[float]) -> float:
    return statistics.quantiles(values, n=4)[0] if len(values) > 1 else values[0]


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return one_process(sys.argv[2], *map(int, sys.argv[3:6]))
    parser = _common.parser(__doc__)
    parser.add_argument("processes", nargs="?", type=int, default=20, help="processes (default 20)")
    args = parser.parse_args()
    _common.begin(args)
    count, sizes = (3, (QUICK_ROUNDS, QUICK_MESSAGES, QUICK_PLACEMENTS)) if args.quick else (
        args.processes, (ROUNDS, MESSAGES, PLACEMENTS))
    ways: dict[str, list[float]] = {"as compare places it": [], "each slice placed anew": []}
    slices: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        library = build(Path(folder))
        if library is None:
            _common.skip(args, "a C compiler ($CC, cc or gcc) and libssl-dev")
        for _ in range(count):
            done = subprocess.run([sys.executable, __file__, "--child", str(library), *map(str, sizes)],
                                  capture_output=True, text=True, check=True)
            given, quartile, fastest, slowest = map(float, done.stdout.split())
            ways["as compare places it"].append(given)
            ways["each slice placed anew"].append(quartile)
            slices.append((fastest, slowest))
    figures: dict = {"slices_placed_anew": slices}
    for way, values in ways.items():
        spread = statistics.stdev(values) / statistics.fmean(values)
        slow = sum(value > SLOW * statistics.median(values) for value in values)
        figures[way] = {"ns_per_op": values, "spread": spread, "slow": slow}
        print(f"{way:24} {len(values)} processes: {min(values):.1f}-{max(values):.1f} ns/op, spread {spread:.2%}, "
              f"{slow} more than {SLOW - 1:.0%} slower than the median")
    follows = statistics.correlation(*ways.values()) if count > 2 else float("nan")
    figures["correlation"] = follows
    print(f"a process's two figures correlate {follows:.2f}; "
          f"slices placed anew: {min(s for s, _ in slices):.1f}-{max(s for _, s in slices):.1f} ns/op")
    _common.save(args, figures)


if __name__ == "__main__":
    main()
