"""How long does a default `jvmbridge verify` of one JDK take, and where does the time go?

Runs `jvmbridge verify` (CBC, CTR, GCM; the full sweep) REPEATS times per JDK, one after the
other on this machine, and prints a Markdown table: the wall time of each run (median and range),
each mode's sweep time, passes and when its intrinsics were seen compiled, against the target of
30 s per JDK. Usage: python benchmarks/verify_time.py [JAVA_HOME ...] (default: the JDKs found here).
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _common

REPEATS = 3
TARGET_SECONDS = 30.0
# Quick mode: one run of the first JDK, CBC alone, verify's own short sweep (`verify --quick`) for 1 s.
QUICK_VERIFY = ["--mode", "cbc", "--quick", "--jdk-time", "1"]


def verify(java_home: str, options: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jvmbridge", "verify", "--java", java_home, "--format", "json",
                           "--quiet", "--output", "/dev/null", *options], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode == 2:
        sys.exit(f"verify could not run on {java_home}: {done.stderr[-1000:]}")
    return json.loads(done.stdout), seconds


def default_homes() -> list[str]:
    from jvmbridge.jvm.discovery import JavaInstall, discover

    return list(dict.fromkeys(str(java.home) for _, java in discover() if isinstance(java, JavaInstall)))


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("homes", nargs="*", metavar="JAVA_HOME", help="JDKs to verify (default: the JDKs found here)")
    args = parser.parse_args()
    _common.begin(args)
    homes = args.homes or default_homes()
    repeats, options = (1, QUICK_VERIFY) if args.quick else (REPEATS, [])
    if args.quick:
        homes = homes[:1]
    print("| JDK | verdicts | wall s (median [min-max] of %d) | per mode: sweep s, passes (after JIT), intrinsics seen after s | within %g s |"
          % (repeats, TARGET_SECONDS))
    print("|---|---|---|---|---|")
    figures = []
    for home in homes:
        runs = [verify(home, options) for _ in range(repeats)]
        walls = [seconds for _, seconds in runs]
        document = runs[-1][0]
        (jdk,) = document["jdks"]
        verdicts = ", ".join(f"{m['mode']} {m['status']}" for m in jdk["modes"])
        modes = "; ".join(f"{m['mode']} {m['seconds']:.1f}, {m['passes']} ({m['compiled_passes']}), "
                          f"{m['proven_after_seconds']}" for m in jdk["modes"])
        median = statistics.median(walls)
        print(f"| {Path(home).name} {jdk['version']} | {verdicts} | {median:.1f} [{min(walls):.1f}-{max(walls):.1f}] "
              f"| {modes} | {'yes' if max(walls) <= TARGET_SECONDS else 'NO'} |")
        figures.append({"java_home": home, "version": jdk["version"], "wall_seconds": walls, "modes": jdk["modes"],
                        "within_target": max(walls) <= TARGET_SECONDS})
    _common.save(args, {"target_seconds": TARGET_SECONDS, "jdks": figures})


if __name__ == "__main__":
    main()
