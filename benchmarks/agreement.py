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
from pathlib import Path

from jvmbridge.stats import paired_log_half_width

ROOT = Path(__file__).resolve().parent.parent
JMH_JAR = ROOT / "build" / "libs" / "jvmbridge-jmh.jar"
OFF = "-XX:+UnlockDiagnosticVMOptions -XX:-UseAES -XX:-UseAESIntrinsics"
# JMH run settings for the reference (its defaults: 5 forks x (5 + 5) x 10 s per benchmark).
JMH_ARGS = ["-f", "2", "-wi", "5", "-w", "1s", "-i", "5", "-r", "1s"]
JMH_DEFAULT_SECONDS = 5 * (5 + 5) * 10
SPEED_SIZES = [16, 64, 256, 1024, 8192, 16384]
MASK = "~0x200000200000000:~0x60000000000:~0:~0:~0"


def timed(command: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return done, time.perf_counter() - started


def jvmbridge(*args: str) -> tuple[list[dict], float]:
    done, seconds = timed([sys.executable, "-m", "jvmbridge", "compare", "--quiet", "--format", "json", *args])
    return json.loads(done.stdout)["results"], seconds


def jmh(shape: str, accelerated: bool) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as scratch:
        result = Path(scratch) / "jmh.json"
        extra = [] if accelerated else ["-jvmArgsAppend", OFF]
        _, seconds = timed(["java", "-jar", str(JMH_JAR), f"AesBench.{shape}$", "-p", "size=38", *JMH_ARGS,
                            *extra, "-rf", "json", "-rff", str(result)])
        metric = json.loads(result.read_text())[0]["primaryMetric"]
    return {"ns": metric["score"], "error": metric["scoreError"]}, seconds


def openssl_table(aesni: bool) -> tuple[dict[int, float], float]:
    """openssl speed's own table (1000s of bytes/s) as ns per operation, by size."""
    env = {k: v for k, v in os.environ.items() if k != "OPENSSL_ia32cap"}
    if not aesni:
        env["OPENSSL_ia32cap"] = MASK
    done, seconds = timed(["openssl", "speed", "-elapsed", "-seconds", "3", "-evp", "aes-256-cbc"], env=env)
    row = next(line for line in done.stdout.splitlines() if line.upper().startswith("AES-256-CBC"))
    kilobytes = [float(v) for v in re.findall(r"([\d.]+)k", row)]
    return {size: size / (k * 1000) * 1e9 for size, k in zip(SPEED_SIZES, kilobytes)}, seconds


def jvm_turn(pooled: dict[str, float]) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]],
                                               float, float]:
    """One turn of the JVM cases: jvmbridge's rows and JMH's, in an order drawn here; by case,
    (figure, half-width) each, and each side's wall time. ``pooled`` gets, by case, jvmbridge's
    rounds pooled as JMH pools them (its row's jmh_score)."""
    ours: dict[str, tuple[float, float]] = {}
    theirs: dict[str, tuple[float, float]] = {}
    seconds = {"jvmbridge": 0.0, "jmh": 0.0}

    def run_ours() -> None:
        rows, seconds["jvmbridge"] = jvmbridge("--engine", "jvm", "--shape", "message", "--shape", "stream")
        ours.update({f"JVM {r['setting']}, {r['shape']} vs JMH": (r["ns_per_op"], r["ns_per_op_error"]) for r in rows})
        pooled.update({f"JVM {r['setting']}, {r['shape']} vs JMH": r["jmh_score"] for r in rows})

    def run_theirs() -> None:
        for shape in ("message", "stream"):
            for accelerated in (True, False):
                reference, took = jmh(shape, accelerated)
                seconds["jmh"] += took
                setting = "intrinsics on" if accelerated else "intrinsics off"
                theirs[f"JVM {setting}, {shape} vs JMH"] = (reference["ns"], reference["error"])

    for side in random.sample([run_ours, run_theirs], 2):
        side()
    return ours, theirs, seconds["jvmbridge"], seconds["jmh"]


def native_turn(pooled: dict[str, float]) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float | None]], float, float]:
    """One turn of the `openssl speed` cases: jvmbridge's rows and speed's own tables, in an order
    drawn here (``pooled`` as jvm_turn's, left as it is: speed's table has no rounds to pool)."""
    ours: dict[str, tuple[float, float]] = {}
    theirs: dict[str, tuple[float, float | None]] = {}
    seconds = {"jvmbridge": 0.0, "speed": 0.0}

    def case(aesni: bool, size: int) -> str:
        return f"openssl speed row, AES-NI {'on' if aesni else 'off'}, {size} B vs openssl speed's table"

    def run_ours() -> None:
        rows, seconds["jvmbridge"] = jvmbridge("--engine", "openssl-cli", "--sizes", ",".join(map(str, SPEED_SIZES)))
        ours.update({case(r["accelerated"], r["message_bytes"]): (r["ns_per_op"], r["ns_per_op_error"]) for r in rows})

    def run_theirs() -> None:
        for aesni in (True, False):
            table, took = openssl_table(aesni)
            seconds["speed"] += took
            theirs.update({case(aesni, size): (ns, None) for size, ns in table.items()})

    for side in random.sample([run_ours, run_theirs], 2):
        side()
    return ours, theirs, seconds["jvmbridge"], seconds["speed"]


def line(case: str, pairs: list[tuple[tuple[float, float | None], tuple[float, float | None]]]) -> str:
    """A case's row: each turn's ratio (jvmbridge over the reference), their geometric mean and its
    95% interval over turns, the verdict on 1.00 +/- 0.03, and the widest interval each side had."""
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
    return (f"| {case} | {statistics.fmean(p[0][0] for p in pairs):,.1f} | {widest(0)} "
            f"| {statistics.fmean(p[1][0] for p in pairs):,.1f} | {widest(1)} | {per_turn} "
            f"| {centre:.3f} [{low:.3f}-{high:.3f}] | {verdict} |")


def main() -> None:
    turns = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not JMH_JAR.is_file():
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
            ours, theirs, ours_took, theirs_took = turn(pooled)
            seconds[names[0]] += ours_took
            seconds[names[1]] += theirs_took
            for case, figure in ours.items():
                by_case.setdefault(case, []).append((figure, theirs[case]))
            for case, score in pooled.items():
                pooled_by_case.setdefault(case, []).append((score, theirs[case][0]))
    for case, pairs in by_case.items():
        print(line(case, pairs))
    # What of a difference is the statistic (a lower quartile of forks against a mean of every round)
    # and what is the harness: jvmbridge's own rounds pooled as JMH pools them, against JMH.
    print("\njvmbridge's rounds pooled as JMH pools them (its rows' jmh_score) against JMH, each turn: "
          + "; ".join(f"{case.removesuffix(' vs JMH')} " + ", ".join(f"{ours / theirs:.3f}" for ours, theirs in pairs)
                      for case, pairs in pooled_by_case.items()))
    print(f"\nWall time over {turns} turns: " + "; ".join(f"{name} {took:.0f} s" for name, took in seconds.items())
          + f". JMH as configured here: {' '.join(JMH_ARGS)}; its defaults would need at least "
          f"{JMH_DEFAULT_SECONDS * 4} s for the 4 JVM points ({JMH_DEFAULT_SECONDS} s a point).")


if __name__ == "__main__":
    main()
