"""How long does `jvmbridge report` take over a large fleet's check documents?

Writes N generated `check` documents (default 2,000 hosts: two JDKs and a running JVM each, three
modes, one host in fifty with UseAES off, one in a hundred unreachable), then times the real CLI
`jvmbridge report DIR` on them, table and JSON, 5 runs each (median, min-max), and the folder's size.
Issue 14's target: under 2 s on this 2-core machine.

    python benchmarks/fleet_report.py [HOSTS]
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common


def verdicts(off: bool) -> list[dict]:
    if off:
        return [{"mode": m, "status": "disabled by a flag", "reason": "UseAES=false [command line]",
                 "fix": "remove -XX:-UseAES from the JVM's command line"} for m in ("CBC", "CTR", "GCM")]
    return [{"mode": m, "status": "active, verified", "reason": "JIT used ... (intrinsic) within 0.2 s; "
             "576 cases x 8 call patterns = OpenSSL after the JIT", "fix": ""} for m in ("CBC", "CTR", "GCM")]


def document(i: int) -> dict:
    host = f"host-{i:05d}"
    if i % 100 == 99:
        return {"host": host, "unchecked": "unreachable: Failed to connect to the host via ssh"}
    jdk = {"java_home": "/usr/lib/jvm/java-17-openjdk-amd64", "version": "17.0.15", "options": [],
           "flags": {}, "evidence": {}, "verification": {}, "verdicts": verdicts(False)}
    return {"schema_version": 2, "host": host, "cpu": {"model": "AMD EPYC", "features": {}},
            "jdks": [jdk, {**jdk, "java_home": "/usr/lib/jvm/temurin-21", "version": "21.0.5"}],
            "live_jvms": [{"pid": 1000 + i, "java_home": "/usr/lib/jvm/java-17-openjdk-amd64",
                           "command_line": "java -XX:-UseAES -jar app.jar" if i % 50 == 7 else "java -jar app.jar",
                           "verdicts": verdicts(i % 50 == 7)}], "exit_code": 0}


def main() -> None:
    parser = _common.parser(__doc__)
    parser.add_argument("hosts", nargs="?", type=int, default=2000, help="check documents to write (default 2000)")
    args = parser.parse_args()
    _common.begin(args)
    hosts, runs = (20, 1) if args.quick else (args.hosts, 5)
    figures: dict = {"hosts": hosts}
    with tempfile.TemporaryDirectory() as folder:
        for i in range(hosts):
            (Path(folder) / f"host-{i:05d}.json").write_text(json.dumps(document(i)))
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
        print(f"{hosts} documents, {size / 1e6:.1f} MB")
        figures["megabytes"] = size / 1e6
        for output in ("table", "json"):
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "jvmbridge", "report", folder, "--format", output],
                                      capture_output=True, text=True)
                times.append(time.perf_counter() - start)
            assert done.returncode in (1, 2), done.stderr
            print(f"report --format {output}: {statistics.median(times):.2f} s [{min(times):.2f}-{max(times):.2f}], "
                  f"{len(done.stdout.splitlines())} lines")
            figures[f"report_{output}_seconds"] = times
    _common.save(args, figures)


if __name__ == "__main__":
    main()
