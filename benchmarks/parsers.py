"""Does every parser of another party's text take linear time, even on its worst input?

Feeds each parser in tests/worst_inputs.py (a JVM's replies and output, a host's or a user's file,
a program's output) 16 MiB of its worst input and prints the seconds each took, and the MiB per
second. A parser whose pattern backtracks would take hours here (a 300,000-space flag line took one
176 s); a linear one takes seconds.

    python benchmarks/parsers.py [MIB]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import _common

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the parsers and their worst inputs
from worst_inputs import PARSERS  # noqa: E402


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("mib", nargs="?", type=int, default=16, help="MiB of each worst input (default 16)")
    args = parser.parse_args()
    _common.begin(args)
    size = (64 * 1024) if args.quick else args.mib * 1024 * 1024
    figures = {}
    for each in PARSERS:
        text = each.worst(size)
        started = time.perf_counter()
        each.read(text)
        seconds = time.perf_counter() - started
        figures[each.name] = seconds
        print(f"{each.name:45} {seconds:7.2f} s  {len(text) / 2**20 / seconds:8.1f} MiB/s", flush=True)
    _common.save(args, {"bytes": size, "seconds": figures})


if __name__ == "__main__":
    main()
