"""Do jvmbridge's figures agree with the reference tools, and how much sooner do they arrive?

Runs on this machine, in turns (each turn both sides once, in an order drawn per turn, so drift of
the machine between runs moves both sides of a turn alike and shows as turns that disagree):
- the JVM rows (intrinsics on/off, message and stream shapes) against JMH 1.37 benchmarks of the
  same operations (benchmarks/jmh, built by `gradle jmhJar`), same JVM flags;
- the `openssl speed` C-loop rows at openssl speed's sizes against `openssl speed`'s own table,
  AES-NI on and off;
and prints a Markdown table: per case the ratio of the two figures in each turn, their geometric
mean with its 95% interval over turns (Student's t on the log ratios, as compare's paired
speedups), whether that is within the target 1.00 +/- 0.03, and the wall time each side took.
jvmbridge's figure is the mean of each fork's lower quartile of rounds, JMH's the mean of every
round: on symmetric noise the first sits about half a round's spread below. Usage:
python benchmarks/agreement.py [TURNS]   (default 3)
"""
from __future__ import annotations

import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _common

from jvmbridge.stats.summary import paired_log_half_width

ROOT = Path(__file__).resolve().parent.parent
JMH_JAR = ROOT / "build" / "libs" / "jvmbridge-jmh.jar"
OFF = "-XX:+UnlockDiagnosticVMOptions -XX:-UseAES -XX:-UseAESIntrinsics"
# JMH run settings for the reference (its defaults: 5 forks x (5 + 5) x 10 s per benchmark).
JMH_ARGS = ["-f", "2", "-wi", "5", "-w", "1s", "-i", "5", "-r", "1s"]
JMH_DEFAULT_SECONDS = 5 * (5 + 5) * 10
SPEED_SIZES = [16, 64, 256, 1024, 8192, 16384]
MASK = "~0x200000200000000:~0x60000000000:~0:~0:~0"


@dataclass(frozen=True)
class Plan:
    """What each side runs: the JVM rows' shapes, JMH's settings, the `openssl speed` sizes and seconds,
    and how jvmbridge is run (its command, and options added to each compare)."""
    shapes: tuple[str, ...] = ("message", "stream")
    jmh_args: tuple[str, ...] = tuple(JMH_ARGS)
    sizes: tuple[int, ...] = tuple(SPEED_SIZES)
    speed_seconds: int = 3
    jvmbridge: tuple[str, ...] = tuple(_common.jvmbridge_command(quick=False))
    compare_options: tuple[str, ...] = ()


# Quick mode: the message shape, one JMH fork of one 100 ms round, one size, a fork of two 10 ms rounds a row.
QUICK = Plan(shapes=("message",), jmh_args=("-f", "1", "-wi", "0", "-i", "1", "-r", "100ms"), sizes=(16,),
             speed_seconds=1, jvmbridge=tuple(_common.jvmbridge_command(quick=True)),
             compare_options=("--forks", "1", "--max-forks", "1", "--rounds", "2", "--round-time", "0.1"))


def timed(command: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return done, time.perf_counter() - started


def jvmbridge(plan: Plan, *args: str) -> tuple[list[dict], float]:
    done, seconds = timed([*plan.jvmbridge, "compare", "--quiet", "--format", "json", *plan.compare_options, *args])
    return json.loads(done.stdout)["results"], seconds


def jmh(plan: Plan, shape: str, accelerated: bool) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as scratch:
        result = Path(scratch) / "jmh.json"
        extra = [] if accelerated else ["-jvmArgsAppend", OFF]
        _, seconds = timed(["java", "-jar", str(JMH_JAR), f"AesBench.{shape}$", "-p", "size=38", *plan.jmh_args,
                            *extra, "-rf", "json", "-rff", str(result)])
        metric = json.loads(result.read_text())[0]["primaryMetric"]
    error = float(metric["scoreError"])  # "NaN" where JMH ran a single iteration: no interval
    return {"ns": metric["score"], "error": None if math.isnan(error) else error}, seconds


def openssl_table(plan: Plan, aesni: bool) -> tuple[dict[int, float], float]:
    """openssl speed's own table (1000s of bytes/s) as ns per operation, by size."""
    env = {k: v for k, v in os.environ.items() if k != "OPENSSL_ia32cap"}
    if not aesni:
        env["OPENSSL_ia32cap"] = MASK
    # Its own six sizes, or the single size -bytes asks for (quick mode's).
    sizes = [] if plan.sizes == tuple(SPEED_SIZES) else ["-bytes", str(*plan.sizes)]
    done, seconds = timed(["openssl", "speed", "-elapsed", "-seconds", str(plan.speed_seconds), *sizes, "-evp",
                           "aes-256-cbc"], env=env)
    row = next(line for line in done.stdout.splitlines() if line.upper().startswith("AES-256-CBC"))
    kilobytes = [float(v) for v in re.findall(r"([\d.]+)k", row)]
    return {size: size / (k * 1000) * 1e9 for size, k in zip(plan.sizes, kilobytes)}, seconds


def jvm_turn(plan: Plan, pooled: dict[str, float]) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]],
                                               float, float]:
    """One turn of the JVM cases: jvmbridge's rows and JMH's, in an order drawn here; by case,
    (figure, half-width) each, and each side's wall time. ``pooled`` gets, by case, jvmbridge's
    rounds pooled as JMH pools them (its row's jmh_score)."""
    ours: dict[str, tuple[float, float]] = {}
    theirs: dict[str, tuple[float, float]] = {}
    seconds = {"jvmbridge": 0.0, "jmh": 0.0}

    def run_ours() -> None:
        shapes = [option for shape in plan.shapes for option in ("--shape", shape)]
        rows, seconds["jvmbridge"] = jvmbridge(plan, "--engine", "jvm", *shapes)
        ours.update({f"JVM {r['setting']}, {r['shape']} vs JMH": (r["ns_per_op"], r["ns_per_op_error"]) for r in rows})
        pooled.update({f"JVM {r['setting']}, {r['shape']} vs JMH": r["jmh_score"] for r in rows})

    def run_theirs() -> None:
        for shape in plan.shapes:
            for accelerated in (True, False):
                reference, took = jmh(plan, shape, accelerated)
                seconds["jmh"] += took
                setting = "intrinsics on" if accelerated else "intrinsics off"
                theirs[f"JVM {setting}, {shape} vs JMH"] = (reference["ns"], reference["error"])

    for side in random.sample([run_ours, run_theirs], 2):
        side()
    return ours, theirs, seconds["jvmbridge"], seconds["jmh"]


def native_turn(plan: Plan, pooled: dict[str, float]) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float | None]], float, float]:
    """One turn of the `openssl speed` cases: jvmbridge's rows and speed's own tables, in an order
    drawn here (``pooled`` as jvm_turn's, left as it is: speed's table has no rounds to pool)."""
    ours: dict[str, tuple[float, float]] = {}
    theirs: dict[str, tuple[float, float | None]] = {}
    seconds = {"jvmbridge": 0.0, "speed": 0.0}

    def case(aesni: bool, size: int) -> str:
        return f"openssl speed row, AES-NI {'on' if aesni else 'off'}, {size} B vs openssl speed's table"

    def run_ours() -> None:
        rows, seconds["jvmbridge"] = jvmbridge(plan, "--engine", "openssl-cli", "--sizes", ",".join(map(str, plan.sizes)))
        ours.update({case(r["accelerated"], r["message_bytes"]): (r["ns_per_op"], r["ns_per_op_error"]) for r in rows})

    def run_theirs() -> None:
        for aesni in (True, False):
            table, took = openssl_table(plan, aesni)
            seconds["speed"] += took
            theirs.update({case(aesni, size): (ns, None) for size, ns in table.items()})

    for side in random.sample([run_ours, run_theirs], 2):
        side()
    return ours, theirs, seconds["jvmbridge"], seconds["speed"]


def line(case: str, pairs: list[tuple[tuple[float, float | None], tuple[float, float | None]]], found: list) -> str:
    """A case's row: each turn's ratio (jvmbridge over the reference), their geometric mean and its
    95% interval over turns, the verdict on 1.00 +/- 0.03, and the widest interval each side had;
    appended to ``found`` as figures."""
    ratios = [ours[0] / theirs[0] for ours, theirs in pairs]
    logs = [math.log(r) for r in ratios]
    centre = math.exp(statistics.fmean(logs))
    spread = paired_log_half_width(ratios)
    low, high = centre * math.exp(-spread), centre * math.exp(spread)
    if abs(centre - 1) > 0.03:
        verdict = "MISSED, " + ("a bias (its interval excludes 1)" if low > 1 or high < 1 else "within the turns' spread")
    else:
        verdict = "ok"

    def widest(side: int) -> str:
        errors = [pair[side][1] / pair[side][0] for pair in pairs if pair[side][1] is not None]
        return f"±{max(errors):.1%}" if errors else "-"
    per_turn = ", ".join(f"{r:.3f}" for r in ratios)
    found.append({"case": case, "jvmbridge_ns": [p[0][0] for p in pairs], "reference_ns": [p[1][0] for p in pairs],
                  "ratios": ratios, "ratio": centre, "low": low, "high": high, "verdict": verdict})
    return (f"| {case} | {statistics.fmean(p[0][0] for p in pairs):,.1f} | {widest(0)} "
            f"| {statistics.fmean(p[1][0] for p in pairs):,.1f} | {widest(1)} | {per_turn} "
            f"| {centre:.3f} [{low:.3f}-{high:.3f}] | {verdict} |")


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("turns", nargs="?", type=int, help="turns (default 3; quick: 1)")
    args = parser.parse_args()
    _common.begin(args)
    _common.own_data_home()
    turns = args.turns or (1 if args.quick else 3)
    plan = QUICK if args.quick else Plan()
    if not JMH_JAR.is_file():
        if args.quick:  # no Gradle build in quick mode: .ci/run builds the jar before it runs the benchmarks
            _common.skip(args, f"{JMH_JAR.relative_to(ROOT)}: run `gradle jmhJar`")
        timed(["gradle", "--no-daemon", "-q", "jmhJar"], cwd=ROOT)
    print(f"jvmbridge agreement benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {turns} turns\n")
    print("| case (38-byte AES-256-CBC unless said) | jvmbridge ns/op (mean of turns) | widest ±95% "
          "| reference ns/op | widest ±99.9% (JMH) | ratio in each turn | ratio, 95% over turns | within 1.00±0.03 |")
    print("|---|---|---|---|---|---|---|---|")
    seconds = {"jvmbridge JVM rows": 0.0, "JMH": 0.0, "jvmbridge openssl-cli rows": 0.0, "openssl speed tables": 0.0}
    by_case: dict[str, list] = {}
    pooled_by_case: dict[str, list[tuple[float, float]]] = {}  # (jvmbridge's jmh_score, JMH's score) per turn
    for _ in range(turns):
        for turn, names in ((jvm_turn, ("jvmbridge JVM rows", "JMH")),
                            (native_turn, ("jvmbridge openssl-cli rows", "openssl speed tables"))):
            pooled: dict[str, float] = {}
            ours, theirs, ours_took, theirs_took = turn(plan, pooled)
            seconds[names[0]] += ours_took
            seconds[names[1]] += theirs_took
            for case, figure in ours.items():
                by_case.setdefault(case, []).append((figure, theirs[case]))
            for case, score in pooled.items():
                pooled_by_case.setdefault(case, []).append((score, theirs[case][0]))
    found: list[dict] = []
    for case, pairs in by_case.items():
        print(line(case, pairs, found))
    # What of a difference is the statistic (a lower quartile of forks against a mean of every round)
    # and what is the harness: jvmbridge's own rounds pooled as JMH pools them, against JMH.
    print("\njvmbridge's rounds pooled as JMH pools them (its rows' jmh_score) against JMH, each turn: "
          + "; ".join(f"{case.removesuffix(' vs JMH')} " + ", ".join(f"{ours / theirs:.3f}" for ours, theirs in pairs)
                      for case, pairs in pooled_by_case.items()))
    print(f"\nWall time over {turns} turns: " + "; ".join(f"{name} {took:.0f} s" for name, took in seconds.items())
          + f". JMH as configured here: {' '.join(plan.jmh_args)}; its defaults would need at least "
          f"{JMH_DEFAULT_SECONDS * 4} s for the 4 JVM points ({JMH_DEFAULT_SECONDS} s a point).")
    _common.save(args, {"turns": turns, "cases": found, "seconds": seconds,
                        "pooled_against_jmh": {case: [ours / theirs for ours, theirs in pairs]
                                               for case, pairs in pooled_by_case.items()}})


if __name__ == "__main__":
    main()
