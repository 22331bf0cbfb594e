"""Do jvmbridge's figures agree with the reference tools, and how much sooner do they arrive?

Runs, in one go on this machine:
- the JVM rows (intrinsics on/off, message and stream shapes) against JMH 1.37 benchmarks of the
  same operations (benchmarks/jmh, built by `gradle jmhJar`), same JVM flags;
- the `openssl speed` C-loop rows at openssl speed's sizes against `openssl speed`'s own table,
  AES-NI on and off;
and prints a Markdown table: both figures, their ratio (target 1.00 +/- 0.03), the interval each
reached (jvmbridge's: 95% over forks; JMH's: its 99.9% Error), and the wall time each took.
jvmbridge's figure is the mean of each fork's lower quartile of rounds, JMH's the mean of every
round: on symmetric noise the first sits about half a round's spread below. Usage:
python benchmarks/agreement.py
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def line(case: str, ours: float, our_error: float | None, reference: float, ref_error: float | None) -> str:
    ratio = ours / reference
    verdict = "ok" if abs(ratio - 1) <= 0.03 else "MISSED"
    # Do the two intervals overlap? If so a miss is noise the intervals admit, not a bias.
    overlap = abs(ours - reference) <= (our_error or 0) + (ref_error or 0)

    def pct(error, value):
        return f"±{error / value:.1%}" if error is not None else "-"
    return (f"| {case} | {ours:,.1f} | {pct(our_error, ours)} | {reference:,.1f} | {pct(ref_error, reference)} "
            f"| {ratio:.3f} | {verdict} | {'yes' if overlap else 'no'} |")


def main() -> None:
    if not JMH_JAR.is_file():
        timed(["gradle", "--no-daemon", "-q", "jmhJar"], cwd=ROOT)
    print(f"jvmbridge agreement benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| case (38-byte AES-256-CBC unless said) | jvmbridge ns/op | ±95% | reference ns/op | ±99.9% (JMH) "
          "| ratio | within 1.00±0.03 | intervals overlap |")
    print("|---|---|---|---|---|---|---|---|")
    rows, jvm_seconds = jvmbridge("--engine", "jvm", "--shape", "message", "--shape", "stream")
    jmh_seconds = 0.0
    for row in rows:
        reference, seconds = jmh(row["shape"], row["accelerated"])
        jmh_seconds += seconds
        print(line(f"JVM {row['setting']}, {row['shape']} vs JMH", row["ns_per_op"], row["ns_per_op_error"],
                   reference["ns"], reference["error"]))
    sizes = ",".join(map(str, SPEED_SIZES))
    native, native_seconds = jvmbridge("--engine", "openssl-cli", "--sizes", sizes)
    speed_seconds = 0.0
    for aesni in (True, False):
        table, seconds = openssl_table(aesni)
        speed_seconds += seconds
        for row in (r for r in native if r["accelerated"] == aesni):
            print(line(f"openssl speed row, AES-NI {'on' if aesni else 'off'}, {row['message_bytes']} B "
                       "vs openssl speed's table", row["ns_per_op"], row["ns_per_op_error"],
                       table[row["message_bytes"]], None))
    widest = max(r["ns_per_op_error"] / r["ns_per_op"] for r in rows)
    forks = ", ".join(str(r["forks"]) for r in rows)
    print(f"\nWall time: jvmbridge JVM rows {jvm_seconds:.0f} s for {len(rows)} points (forks {forks}; widest "
          f"interval ±{widest:.1%}); JMH as configured here ({' '.join(JMH_ARGS)}) {jmh_seconds:.0f} s; JMH defaults would "
          f"need at least {JMH_DEFAULT_SECONDS * len(rows)} s ({JMH_DEFAULT_SECONDS} s a point), a fifth of which is "
          f"{JMH_DEFAULT_SECONDS * len(rows) / 5:.0f} s.")
    print(f"Native: jvmbridge openssl-cli rows {native_seconds:.0f} s; openssl speed tables {speed_seconds:.0f} s.")


if __name__ == "__main__":
    main()
