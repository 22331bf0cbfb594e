"""How right compare's time-left forecast is: a comparison run through the API with a progress
callback, recording each update's forecast; then, at each quarter of the run's real length, the
forecast made then against the time that was really left. Also each job's seconds and forks, and
each engine's overhead per fork (its seconds beyond the timed rounds), the forecast's first guess
(Engine.fork_overhead_seconds) beside it. Targets: within 30% by the halfway point; for
`iterations=1e8`, within 10% from the end of the first fork.

    python benchmarks/eta.py [compare options as API keywords, e.g. sizes=sweep engine=jvm]
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import _common

import jvmbridge
from jvmbridge.engines import ENGINES
from jvmbridge.sampling.policy import Sampling

# Quick mode's run, unless the options given say otherwise: one C-loop job of one short fork.
QUICK = {"engine": "c-loop", "rounds": 2, "round_time": 0.01, "forks": 1, "max_forks": 1}


def option(argument: str) -> tuple[str, object]:
    """KEY=VALUE as the API takes it: a number as a number (rounds=2), anything else as given."""
    key, value = argument.split("=", 1)
    for kind in (int, float):
        try:
            return key, kind(value)
        except ValueError:
            pass
    return key, value


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("options", nargs="*", metavar="KEY=VALUE", help="compare's options as API keywords")
    args = parser.parse_args()
    _common.begin(args)
    options = {**(QUICK if args.quick else {}), **dict(map(option, args.options))}
    if isinstance(options.get("engine"), str):
        options["engine"] = options["engine"].split(",")
    updates = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        frame = jvmbridge.compare(**options, output=Path(scratch) / "run.jsonl",
                                  progress=lambda update: updates.append((time.monotonic() - started, update)))
    total = time.monotonic() - started
    print(f"{len(frame)} rows in {total:.1f} s\n")
    print(f"{'job':>4} {'seconds':>8} {'forks':>5} {'overhead/fork':>13} {'guess':>6}  label")
    figures: dict = {"rows": len(frame), "seconds": total, "jobs": [], "forecasts": []}
    sampling = Sampling(rounds=int(options.get("rounds", Sampling.rounds)),
                        round_seconds=float(options.get("round_time", Sampling.round_seconds)))
    for _, update in updates:
        if update.finished:
            forks = max((p.forks for _, p in update.parts), default=0)
            engine = ENGINES.get(update.engine)  # None: a job of several engines (the conductor's, by default)
            overhead = (update.job_elapsed / forks - engine.timed_seconds(sampling) * len(update.parts)
                        if forks and engine else None)
            guess = engine.fork_overhead_seconds if engine else None
            print(f"{update.job + 1:>4} {update.job_elapsed:>8.1f} {forks:>5} {_figure(overhead):>13} "
                  f"{_figure(guess):>6}  {update.label}")
            figures["jobs"].append({"job": update.job + 1, "label": update.label, "seconds": update.job_elapsed,
                                    "forks": forks, "overhead_per_fork": overhead, "guess": guess})
    print(f"\n{'at':>11} {'forecast left':>13} {'really left':>11} {'error':>6}")
    # The first forecast made once a fork had finished, then the latest made by each quarter of the run.
    first_fork = next(([(at, u)] for at, u in updates if any(p.forks for _, p in u.parts)), [])
    moments = [("first fork", first_fork)] + [(f"{share:.0%}", [(at, u) for at, u in updates if at <= share * total])
                                              for share in (0.25, 0.5, 0.75)]
    for name, made in moments:
        if not made:  # a run so short that its first forecast came later
            print(f"{name:>11} {'-':>13}")
            continue
        at, update = max(made, key=lambda pair: pair[0])
        left = total - at
        print(f"{name:>11} {update.seconds_left:>13.1f} {left:>11.1f} {update.seconds_left / left - 1:>+6.0%}")
        figures["forecasts"].append({"at": name, "at_seconds": at, "forecast_left": update.seconds_left,
                                     "really_left": left})
    _common.save(args, figures)


def _figure(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.2f}"


if __name__ == "__main__":
    main()
