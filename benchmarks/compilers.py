"""The throughput cliff behind `check`'s "not usable" verdict: AES-256-CBC of 1 KiB messages (Cipher.init
before each) in one JVM per configuration, best round's ns per message, for C2 with the AES intrinsics,
C2 with -XX:-UseAES, C1 only (-XX:TieredStopAtLevel=1), C1 only with -XX:-UseAES, and the interpreter
(-Xint). It answers whether a JVM whose tiers stop at C1 runs AES as slowly as one without the
intrinsics (they are C2's), and how far below both the interpreter is.

    python benchmarks/compilers.py [--java JAVA] [--rounds 8]   (--quick: short warm-up and rounds)
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import _common

HERE = Path(__file__).resolve().parent
CONFIGURATIONS = {"C2 with intrinsics": [], "C2, -XX:-UseAES": ["-XX:-UseAES"],
                  "C1 only (TieredStopAtLevel=1)": ["-XX:TieredStopAtLevel=1"],
                  "C1 only, -XX:-UseAES": ["-XX:TieredStopAtLevel=1", "-XX:-UseAES"], "interpreter (-Xint)": ["-Xint"]}


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("--java", default=shutil.which("java") or "java", help="the java to run (default: PATH's)")
    parser.add_argument("--rounds", type=int, default=8, help="timed rounds per configuration; the best is kept")
    args = parser.parse_args()
    _common.begin(args)
    # Long enough for C2 to compile the loop and its intrinsics first (a few seconds on 2 vCPUs).
    warm, rounds, seconds = ("0.5", "2", "0.2") if args.quick else ("5", str(args.rounds), "0.5")
    javac = Path(args.java).resolve().parent / "javac"
    figures = {}
    with tempfile.TemporaryDirectory(prefix="jvmbridge-cliff-") as classes:
        subprocess.run([str(javac), "--release", "11", "-d", classes, str(HERE / "CompilersCliff.java")], check=True)
        for name, options in CONFIGURATIONS.items():
            done = subprocess.run([args.java, *options, "-cp", classes, "CompilersCliff", warm, rounds, seconds],
                                  capture_output=True, text=True, check=True)
            figures[name] = float(done.stdout.split()[1])
            print(f"{figures[name]:>12,.0f} ns/op  {figures[name] / figures['C2 with intrinsics']:>7.1f}x  {name}",
                  flush=True)
    _common.save(args, {"java": args.java, "message_bytes": 1024, "cipher": "AES-256-CBC, init each message",
                        "ns_per_op": figures})


if __name__ == "__main__":
    main()
