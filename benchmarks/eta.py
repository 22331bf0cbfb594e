"""How right compare's time-left forecast is: a comparison run through the API with a progress
callback, recording each update's forecast; then, at each quarter of the run's real length, the
forecast made then against the time that was really left. Also each job's seconds and forks, and
each engine's overhead per fork (its seconds beyond the timed rounds), the forecast's first guess
(Engine.fork_overhead_seconds) beside it. Issue 27's target: within 30% by the halfway point.

    python benchmarks/eta.py [compare options as API keywords, e.g. sizes=sweep engine=jvm]
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import jvmbridge
from jvmbridge.engines import ENGINES
from jvmbridge.workload import Sampling


def main() -> None:
    options = dict(argument.split("=", 1) for argument in sys.argv[1:])
    if "engine" in options:
        options["engine"] = options["engine"].split(",")
    updates = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        frame = jvmbridge.compare(**options, output=Path(scratch) / "run.jsonl",
                                  progress=lambda update: updates.append((time.monotonic() - started, update)))
    total = time.monotonic() - started
    print(f"{len(frame)} rows in {total:.1f} s\n")
    print(f"{'job':>4} {'seconds':>8} {'forks':>5} {'overhead/fork':>13} {'guess':>6}  label")
    sampling = Sampling(rounds=int(options.get("rounds", Sampling.rounds)),
                        round_seconds=float(options.get("round_time", Sampling.round_seconds)))
    for _, update in updates:
        if update.finished:
            forks = max((p.forks for _, p in update.parts), default=0)
            engine = ENGINES[update.engine]
            overhead = update.job_elapsed / forks - engine.timed_seconds(sampling) * len(update.parts) if forks else 0
            print(f"{update.job + 1:>4} {update.job_elapsed:>8.1f} {forks:>5} {overhead:>13.2f} "
                  f"{engine.fork_overhead_seconds:>6.2f}  {update.label}")
    print(f"\n{'at':>6} {'forecast left':>13} {'really left':>11} {'error':>6}")
    for share in (0.25, 0.5, 0.75):
        at, update = max(((at, u) for at, u in updates if at <= share * total), key=lambda pair: pair[0])
        left = total - at
        print(f"{share:>6.0%} {update.seconds_left:>13.1f} {left:>11.1f} {update.seconds_left / left - 1:>+6.0%}")



if __name__ == "__main__":
    main()
