"""Which forks warmed the next one's workers up aside, and how many of their slices were disturbed:
a compare with the conductor's steps timed, fork by fork (decision 0005).

Per fork: its seconds; "beside" where the next fork's warm-ups ran aside during its slices; the
seconds it warmed its own workers in place ("in place"); the share of its rows' slices disturbed
(lost more than DISTURBED_SHARE of their time to other work; the rule also reads the yardsticks'
slices, which the run's rows do not show). Then the shares of forks beside warm-ups and of forks
alone. Run it quiet and beside the hogs of benchmarks/README.md to see where the two shares lie.
Forks are numbered over the run: one interleaved job, as the default compare's.

    python benchmarks/warm_aside.py [--runs N] [COMPARE OPTION ...]   (default: 1 run, no options)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import _common

from jvmbridge.stats.summary import DISTURBED_SHARE

# The conductor's steps timed in the child, by name, with the thread each ran on.
STEPS = ("fork", "_warm_up")


def child(log_path: str, quick: bool, options: list[str]) -> None:
    """In the child: compare with the conductor's steps timed, the log written at its end."""
    import atexit

    import jvmbridge.conductor.conduct as conduct
    from jvmbridge.cli import main as cli

    log: list[tuple[str, bool, float, float]] = []

    def timed(name: str):
        step = getattr(conduct._Run, name)

        def run(*args, **kwargs):
            started = time.monotonic()
            try:
                return step(*args, **kwargs)
            finally:
                log.append((name, threading.current_thread() is threading.main_thread(), started, time.monotonic()))
        return run

    for name in STEPS:
        setattr(conduct._Run, name, timed(name))
    if quick:
        _common.short_warm_ups()
    atexit.register(lambda: Path(log_path).write_text(json.dumps(log)))
    sys.argv = ["jvmbridge", "compare", "--quiet", "--format", "json", *options]
    cli()


def forks(log: list, document: dict) -> list[dict]:
    """Per fork: seconds, whether warm-ups ran aside beside it, its warm-ups in place, its slices disturbed."""
    slices: dict[int, list[bool]] = {}
    for row in document["results"]:
        for fork, lost in zip(row["round_fork"], row["round_lost_share"]):
            slices.setdefault(fork, []).append((lost or 0) > DISTURBED_SHARE)
    found = []
    for number, (_, _, start, end) in enumerate(sorted((e for e in log if e[0] == "fork"), key=lambda e: e[2])):
        during = [e for e in log if e[0] == "_warm_up" and start <= e[2] < end]
        disturbed = slices.get(number, [])
        found.append({"seconds": end - start, "beside": any(not main for _, main, _, _ in during),
                      "in_place": sum(e[3] - e[2] for e in during if e[1]),
                      "disturbed": sum(disturbed) / len(disturbed) if disturbed else None})
    return found


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2], sys.argv[3] == "quick", sys.argv[4:])
    parser = _common.parser(__doc__)
    parser.add_argument("--runs", type=int, default=1, help="runs one after another (default 1)")
    parser.add_argument("options", nargs="*", help="compare's options (default: none, as a user runs it)")
    args = parser.parse_args()
    _common.begin(args)
    options = args.options or (["--engine", "c-loop", "--shape", "message", "--forks", "3", "--max-forks", "3"] if args.quick else [])
    runs = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as data:
            log_path = Path(data) / "steps.json"
            done = subprocess.run([sys.executable, __file__, "--child", str(log_path),
                                   "quick" if args.quick else "full", *options], capture_output=True,
                                  text=True, env={**os.environ, "XDG_DATA_HOME": data})
            if done.returncode not in (0, 1):
                sys.exit(f"compare failed: {done.stderr.strip()[-400:]}")
            found = forks(json.loads(log_path.read_text()), json.loads(done.stdout))
        runs.append(found)
        print(f"{sum(f['seconds'] for f in found):.0f} s, {len(found)} forks:")
        for number, f in enumerate(found):
            print(f"  fork {number:2}: {f['seconds']:5.1f} s{'  beside' if f['beside'] else '        '}"
                  + (f"  in place {f['in_place']:.1f} s" if f["in_place"] else "")
                  + (f"  {f['disturbed']:.0%} of its slices disturbed" if f["disturbed"] is not None else ""))
    for kind, beside in (("beside warm-ups", True), ("alone", False)):
        shares = sorted(f["disturbed"] for found in runs for f in found if f["beside"] == beside
                        and f["disturbed"] is not None)
        print(f"forks {kind}: {len(shares)}, slices disturbed "
              + (f"{shares[0]:.0%}-{shares[-1]:.0%}" if shares else "(none)"))
    _common.save(args, {"options": options, "runs": runs})


if __name__ == "__main__":
    main()
