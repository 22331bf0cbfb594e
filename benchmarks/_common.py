"""What every benchmark script shares: its --quick and --json FILE options.

--quick: the smallest real run of the script's code path (.ci/run runs every script so, through
benchmarks/run_quick.py), to prove it still runs against the current code; its figures are not
worth quoting. --json FILE: the script's figures also written as JSON to FILE.
"""
from __future__ import annotations

import argparse
import atexit
import functools
import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

QUICK_NOTE = "quick mode (--quick): proves this script runs against the current code; figures not worth quoting"


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser that shows the script's docstring, with --quick and --json."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the smallest real run: proves the script runs")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON to FILE")
    return parser


def begin(args: argparse.Namespace) -> None:
    """Say so in quick mode, and cut the warm-ups of the runs this process makes."""
    if args.quick:
        print(QUICK_NOTE, flush=True)
        short_warm_ups()


def save(args: argparse.Namespace, figures: dict | list, skipped: str | None = None) -> None:
    """The figures to --json's file, if given."""
    if args.json:
        document = {"script": Path(sys.argv[0]).name, "quick": args.quick, "skipped": skipped, "figures": figures}
        args.json.write_text(json.dumps(_finite(document), indent=1, allow_nan=False, default=_plain) + "\n")


def _finite(value):
    """JSON has no Infinity or NaN: such a figure (an interval there is none of) is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def _plain(value):
    """A numpy number (from a pandas row) as Python's, anything else json cannot write as text."""
    return _finite(value.item()) if hasattr(value, "item") else str(value)


def skip(args: argparse.Namespace, needs: str) -> NoReturn:
    """One line saying what the script needs and lacks here; a JSON file that says so too."""
    print(f"skipped: needs {needs}")
    save(args, {}, skipped=f"needs {needs}")
    sys.exit(0)


def own_data_home() -> None:
    """The runs this script makes save into a folder of their own, removed when it exits: a
    benchmark's runs are not the user's, and in the user's folder they would become this host's
    speed reference and the history compare reads its rounds per fork from."""
    folder = tempfile.mkdtemp(prefix="jvmbridge-benchmark-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["XDG_DATA_HOME"] = folder


def short_warm_ups() -> None:
    """Warm-ups of at most half a second in compare's engines: on a busy machine a JVM never settles and
    each fork would wait out the 15 s cap, which proving the code path does not need. And the
    conductor's forks (interleaved, compare's default) four cycles of 10 ms slices, not ten of 50."""
    from jvmbridge.comparison import interleaved
    from jvmbridge.engines import jvm, native

    # Read first: a renamed constant fails here instead of leaving quick mode slow.
    assert jvm.WARMUP_MAX_SECONDS and jvm.SLICED_WARMUP_MIN_SECONDS and native.NATIVE_WARMUP["warmup_max_seconds"]
    jvm.WARMUP_MIN_SECONDS, jvm.SLICED_WARMUP_MIN_SECONDS, jvm.WARMUP_MAX_SECONDS = 0.1, 0.1, 0.5
    native.NATIVE_WARMUP.update(warmup_min_seconds=0.1, warmup_max_seconds=0.3)
    interleaved.Pace = functools.partial(interleaved.Pace, slice_seconds=0.01, cycles=4)  # pace_of's


def jvmbridge_command(quick: bool) -> list[str]:
    """How a script runs the jvmbridge CLI in a process of its own: in quick mode, through this
    file (below), with short warm-ups."""
    return [sys.executable, __file__] if quick else [sys.executable, "-m", "jvmbridge"]


def quick_run(output: Path, engine: str = "c-loop", forks: int = 1):
    """A tiny saved compare run (2 rounds of 10 ms a fork) for scripts that read one."""
    import jvmbridge

    return jvmbridge.compare(engine=engine, forks=forks, max_forks=forks, rounds=2, round_time=0.01, output=output)


def saved_runs(doc: str | None, forks: int = 3) -> tuple[argparse.Namespace, dict]:
    """For a script that reads saved runs of compare, named on its command line: its arguments, and
    each run as jvmbridge.load reads it, by file name; --quick makes a tiny run of ``forks`` forks."""
    from jvmbridge.api import load

    parsing = parser(doc)
    parsing.add_argument("runs", nargs="*", type=Path, help="saved runs (JSON lines); --quick makes one without")
    args = parsing.parse_args()
    begin(args)
    own_data_home()  # quick mode's run: the host's speed reference is not the user's to move
    if not args.runs and not args.quick:
        parsing.error("saved runs are needed (or --quick)")
    if args.runs:
        return args, {path.name: load(path) for path in args.runs}
    with tempfile.TemporaryDirectory() as scratch:
        return args, {"a quick run": quick_run(Path(scratch) / "run.jsonl", forks=forks)}


if __name__ == "__main__":  # `python benchmarks/_common.py compare ...`: the CLI with quick mode's warm-ups
    from jvmbridge.cli import main

    short_warm_ups()
    main()
