"""jvmbridge's metrics and alert rules against Prometheus's own programs (Debian's prometheus and
prometheus-node-exporter packages): promtool checks and tests the shipped rules, and lints what
`check --format openmetrics` prints; node_exporter, started here on 127.0.0.1 with its textfile
collector on a temporary folder, serves what `check --export-openmetrics` writes there. The
renderers' own tests are in tests/unit/test_metrics.py."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import EVIL, REPO, SHOWN, cannot, cpu_has_aes, jdk_homes, run_cli, stop_jvm, wait_attachable
from prometheus_client.parser import text_string_to_metric_families

from jvmbridge.harness import guard_jar, harness_jar

RULES = REPO / "jvmbridge" / "monitoring" / "jvmbridge-alerts.yml"


def tool(program: str, package: str) -> str:
    found = shutil.which(program)
    if not found:
        cannot(f"needs {program} (Debian package {package}: apt-get install {package})")
    return found


def test_the_shipped_alert_rules_are_valid():
    checked = subprocess.run([tool("promtool", "prometheus"), "check", "rules", str(RULES)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _alert(at: str, name: str, *firing: tuple[dict, str, str]) -> dict:
    """promtool's check that at ``at`` the alert ``name`` fires exactly for ``firing``: (labels,
    summary, description) each; none given: it fires for no series."""
    return {"eval_time": at, "alertname": name,
            "exp_alerts": [{"exp_labels": labels, "exp_annotations": {"summary": summary, "description": description}}
                           for labels, summary, description in firing]}


JDK = {"host": "web-1", "kind": "jdk", "java_home": "/usr/lib/jvm/17", "version": "17.0.15", "mode": "CBC"}
JVM = {"host": "web-2", "kind": "jvm", "java_home": "/usr/lib/jvm/17", "pid": "4242", "main_class": "app.jar",
       "mode": "CTR"}


def _series(name: str, labels: dict, values: str) -> dict:
    return {"series": name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}", "values": values}


# Each alert, over an hour or two of series a minute apart: the series it must fire for, and beside
# it a near miss it must not fire for (another state, or too short a time).
ALERT_TESTS = [{
    "interval": "1m",
    "input_series": [
        _series("jvmbridge_aes_verdict", {**JDK, "state": "disabled"}, "1x120"),
        _series("jvmbridge_aes_verdict", {**JDK, "state": "active"}, "0x120"),
        _series("jvmbridge_aes_verdict", {**JVM, "state": "disabled"}, "0x120"),
        _series("jvmbridge_aes_verdict", {**JVM, "state": "active"}, "1x120"),
        _series("jvmbridge_aes_verdict", {**JDK, "mode": "GCM", "state": "wrong"}, "1x120"),
        _series("jvmbridge_aes_verdict", {**JVM, "mode": "GCM", "state": "wrong"}, "0x120"),
        # C1 only for two hours (fires); usable but not in use yet, and not usable for 3 minutes (do not).
        _series("jvmbridge_aes_verdict", {**JVM, "mode": "GCM", "state": "not_usable"}, "1x120"),
        _series("jvmbridge_aes_verdict", {**JVM, "mode": "CBC", "state": "not_in_use"}, "1x120"),
        _series("jvmbridge_aes_verdict", {**JDK, "mode": "CTR", "state": "not_usable"}, "1x3 0x117"),
        _series("jvmbridge_aes_verdict", {"host": "vm-3", "target": "JDK 17 /jdk", "mode": "CBC",
                                          "state": "unsupported"}, "1x120"),
        # Could not tell for two hours (fires), and for 30 minutes before an answer (does not).
        _series("jvmbridge_aes_verdict", {**JVM, "mode": "CBC", "state": "unknown"}, "1x120"),
        _series("jvmbridge_aes_verdict", {**JDK, "mode": "CTR", "state": "not_observed"}, "1x30 0x90"),
        _series("jvmbridge_guard_mode_state", {**JVM, "state": "wrong"}, "0x10 1x110"),
        # The guard's state as the JMX exporter in the JVM serves it: no host label, the instance names it.
        _series("jvmbridge_guard_mode_state", {"instance": "app-1:9404", "job": "app", "mode": "GCM", "state": "wrong"},
                "0x12 1x108"),
        # Testing for ever (fires after 30 minutes), and testing 20 minutes then verified (does not).
        _series("jvmbridge_guard_mode_state", {**JVM, "mode": "CBC", "state": "testing"}, "1x120"),
        _series("jvmbridge_guard_mode_state", {**JVM, "mode": "GCM", "state": "testing"}, "1x20 0x100"),
        # A provider with no such Cipher, for ever: neither wrong nor unproven, so no alert.
        _series("jvmbridge_guard_mode_state", {**JVM, "mode": "ECB", "state": "not_applicable"}, "1x120"),
        # One host's checks stopped at minute 0; the other's timer wrote a new result every minute.
        _series("jvmbridge_check_timestamp_seconds", {"host": "web-1"}, "0x120"),
        _series("jvmbridge_check_timestamp_seconds", {"host": "web-2"}, "0+60x120"),
    ],
    "alert_rule_test": [
        _alert("3m", "JvmbridgeAesIntrinsicsDisabled"),  # not yet: 5 minutes first
        _alert("10m", "JvmbridgeAesIntrinsicsDisabled",
               ({**JDK, "state": "disabled", "severity": "warning"},
                "AES CBC intrinsics off on web-1 although its CPU has AES",
                "/usr/lib/jvm/17: `jvmbridge check` there names the flag and how to remove it.")),
        _alert("4m", "JvmbridgeAesIntrinsicsNotUsable"),
        _alert("10m", "JvmbridgeAesIntrinsicsNotUsable",
               ({**JVM, "mode": "GCM", "state": "not_usable", "severity": "warning"},
                "AES GCM intrinsics unusable on web-2: the JVM never compiles with C2",
                "/usr/lib/jvm/17 (pid 4242 app.jar): `jvmbridge check` there names the option that keeps C2 off; "
                "AES runs about 8 times slower.")),
        _alert("10m", "JvmbridgeCpuWithoutAes",
               ({"host": "vm-3", "target": "JDK 17 /jdk", "mode": "CBC", "state": "unsupported", "severity": "warning"},
                "The CPU of vm-3 does not offer AES to the JVM (CBC)",
                "JDK 17 /jdk: in a VM, give the guest the host's CPU model (e.g. host-passthrough) so that it sees AES.")),
        _alert("1m", "JvmbridgeAesWrong",
               ({**JDK, "mode": "GCM", "state": "wrong", "severity": "critical"},
                "AES GCM computes WRONG bytes on web-1",
                "/usr/lib/jvm/17: `jvmbridge check` there names the workaround flag; `jvmbridge verify` has the "
                "failing cases.")),
        _alert("5m", "JvmbridgeGuardWrong"),
        _alert("15m", "JvmbridgeGuardWrong",
               ({**JVM, "state": "wrong", "severity": "critical"}, "The jvmbridge guard found AES CTR WRONG on web-2",
                "The JVM (pid 4242 app.jar): its own AES, after its JIT, gave other bytes than the reference; "
                "its log line has the case."),
               ({"instance": "app-1:9404", "job": "app", "mode": "GCM", "state": "wrong", "severity": "critical"},
                "The jvmbridge guard found AES GCM WRONG on app-1:9404",
                "The JVM: its own AES, after its JIT, gave other bytes than the reference; its log line has the case.")),
        _alert("25m", "JvmbridgeGuardNotProven"),
        _alert("45m", "JvmbridgeGuardNotProven",
               ({**JVM, "mode": "CBC", "state": "testing", "severity": "warning"},
                "The jvmbridge guard has not proven AES CBC on web-2 (testing)",
                "The JVM (pid 4242 app.jar): a mode the JVM never uses, or its JIT never compiles, stays unproven.")),
        _alert("100m", "JvmbridgeAesCouldNotTell",
               ({**JVM, "mode": "CBC", "state": "unknown", "severity": "info"},
                "jvmbridge could not tell whether AES CBC is accelerated on web-2",
                "/usr/lib/jvm/17 (pid 4242 app.jar): `jvmbridge check` there says why (a JVM that refuses attach, "
                "a JDK that would not start).")),
        _alert("65m", "JvmbridgeCheckStale"),  # an hour old, not yet for 10 minutes
        _alert("90m", "JvmbridgeCheckStale",
               ({"host": "web-1", "severity": "warning"}, "No jvmbridge check result from web-1 for over an hour",
                "See `systemctl status jvmbridge-check.timer jvmbridge-check.service` and `journalctl -u "
                "jvmbridge-check` there.")),
    ],
}]


def test_the_alert_rules_fire_for_what_they_say_and_not_for_near_misses(tmp_path):
    tests = tmp_path / "jvmbridge-alerts-test.yml"  # JSON is YAML
    tests.write_text(json.dumps({"rule_files": [str(RULES)], "evaluation_interval": "1m", "tests": ALERT_TESTS}))
    tested = subprocess.run([tool("promtool", "prometheus"), "test", "rules", str(tests)], capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    # Every rule is tested, firing and not.
    rules = set(re.findall(r"- alert: (\w+)", RULES.read_text()))
    tested_names = [t["alertname"] for t in ALERT_TESTS[0]["alert_rule_test"]]
    assert set(tested_names) == rules


# -- node_exporter's textfile collector, on loopback ------------------------------------------------

def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def scrape(port: int) -> dict[str, list]:
    """node_exporter's /metrics, as Prometheus's text parser reads it: family name -> samples."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


@pytest.fixture
def node_exporter(tmp_path) -> Iterator[tuple[Path, int]]:
    """Debian's node_exporter on 127.0.0.1 (a free port), its textfile collector alone, on a
    folder of the test's: (that folder, the port). Stopped, and waited for, after the test."""
    program = tool("prometheus-node-exporter", "prometheus-node-exporter")
    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    for _ in range(3):  # another program may take the free port before node_exporter does
        port = _free_port()
        process = subprocess.Popen([program, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                                    "--collector.textfile", f"--collector.textfile.directory={textfiles}"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            for _ in range(100):
                if process.poll() is not None:
                    break
                try:
                    scrape(port)
                except OSError:
                    time.sleep(0.1)
                    continue
                yield textfiles, port
                return
        finally:
            process.terminate()
            _, said = process.communicate(timeout=10)
    pytest.fail(f"node_exporter did not serve on 127.0.0.1: {said.strip()[-300:]}")


@pytest.fixture
def jvm_without_aes() -> Iterator[int]:
    """A running JVM started with -XX:-UseAES (as a container image might be): its pid."""
    java = str(jdk_homes()[0] / "bin" / "java")
    process = subprocess.Popen([java, "-XX:-UseAES", "-cp", str(harness_jar()), "jvmbridge.harness.AesHarness", "loop",
                                "AES/CBC/PKCS5Padding", "16", "300"], stdout=subprocess.DEVNULL)
    try:
        wait_attachable(process.pid)
        yield process.pid
    finally:
        stop_jvm(process)


def _values(samples: list, **labels: str) -> list[float]:
    return [s.value for s in samples if labels.items() <= s.labels.items()]


def test_node_exporter_serves_what_check_exports(node_exporter, jvm_without_aes):
    textfiles, port = node_exporter
    home = jdk_homes()[0]
    exported = textfiles / "jvmbridge.prom"
    done = run_cli("check", "--java", str(home), "--pid", str(jvm_without_aes), "--mode", "cbc", "--mode", "ctr",
                   "--quiet", "--export-openmetrics", str(exported))
    assert done.returncode == 1, done.stderr  # the JVM without AES
    # A second host's file beside it, named as hostile text: read as its own series, the first intact.
    hostile = run_cli("check", "--no-verify", "--mode", "cbc", "--host-name", EVIL, "--quiet", "--format", "openmetrics",
                      "--export-openmetrics", str(textfiles / "hostile.prom"))
    assert hostile.returncode == 0 if cpu_has_aes() else hostile.returncode == 1, hostile.stderr
    assert sorted(p.name for p in textfiles.iterdir()) == ["hostile.prom", "jvmbridge.prom"]  # no partial file
    lint = subprocess.run([tool("promtool", "prometheus"), "check", "metrics"], input=hostile.stdout,
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    metrics = scrape(port)
    assert _values(metrics["node_textfile_scrape_error"]) == [0]
    host = socket.gethostname()
    jdk = {"host": host, "kind": "jdk", "java_home": str(home)}
    jvm = {"host": host, "kind": "jvm", "pid": str(jvm_without_aes), "main_class": "jvmbridge.harness.AesHarness"}
    for mode in ("CBC", "CTR"):
        assert _values(metrics["jvmbridge_aes_intrinsics_active"], **jvm, mode=mode) == [0]
        assert _values(metrics["jvmbridge_aes_verdict"], **jvm, mode=mode, state="disabled") == [1]
        if cpu_has_aes():
            assert _values(metrics["jvmbridge_aes_intrinsics_active"], **jdk, mode=mode) == [1]
            assert _values(metrics["jvmbridge_aes_verified_correct"], **jdk, mode=mode) == [1]
            assert _values(metrics["jvmbridge_aes_verdict"], **jdk, mode=mode, state="verified") == [1]
    assert _values(metrics["jvmbridge_guard_running"], **jvm) == [0]
    assert _values(metrics["jvmbridge_check_exit_code"], host=host) == [1]
    assert _values(metrics["jvmbridge_cpu_feature_present"], host=host, feature="aes") == [int(cpu_has_aes())]
    (checked_at,) = _values(metrics["jvmbridge_check_timestamp_seconds"], host=host)
    assert time.time() - 600 < checked_at <= time.time()
    assert {s.labels["host"] for s in metrics["jvmbridge_check_exit_code"]} == {host, SHOWN}

    # The next run replaces the file whole: node_exporter never reads half of one.
    again = run_cli("check", "--pid", str(jvm_without_aes), "--quiet", "--export-openmetrics", str(exported))
    assert again.returncode == 1, again.stderr
    metrics = scrape(port)
    assert _values(metrics["node_textfile_scrape_error"]) == [0]
    assert not _values(metrics["jvmbridge_aes_verdict"], **jdk)  # this run checked the JVM alone
    assert _values(metrics["jvmbridge_aes_verdict"], **jvm, mode="GCM", state="disabled") == [1]


def test_an_export_into_a_missing_folder_is_refused_in_one_line(tmp_path):
    done = run_cli("check", "--export-openmetrics", str(tmp_path / "no" / "jvmbridge.prom"))
    assert done.returncode == 2 and not done.stdout
    assert len(done.stderr.splitlines()) == 1 and "no such folder" in done.stderr


# -- the guard's MBeans through Prometheus's JMX exporter agent ----------------------------------------

JMX_EXPORTER_JARS = REPO / "build" / "jmx-exporter"


def jmx_exporter_jar() -> Path:
    """The JMX exporter's agent jar, which `gradle jmxExporterJar` (and providerJars, in .ci/run)
    fetched from Maven Central."""
    jars = sorted(JMX_EXPORTER_JARS.glob("jmx_prometheus_javaagent-*.jar"))
    if not jars:
        cannot(f"no JMX exporter jar in {JMX_EXPORTER_JARS}: run `gradle jmxExporterJar` (gradle: apt-get install gradle)")
    return jars[-1]


def guarded_states(tmp_path: Path, guard: str, *options: str, wanted: str, classpath: tuple[Path, ...] = ()
                   ) -> dict[tuple[str, str], float]:
    """A JVM with the guard (its options ``guard``) and the JMX exporter (the shipped rules) on
    127.0.0.1, running the harness's AES workload: its jvmbridge_guard_mode_state series, (mode,
    state) -> value, once every mode is in state ``wanted`` (or after 120 s)."""
    port = _free_port()
    agent = f"-javaagent:{jmx_exporter_jar()}=127.0.0.1:{port}:{REPO / 'jvmbridge' / 'monitoring' / 'jmx-exporter-guard.yml'}"
    process = subprocess.Popen([str(jdk_homes()[0] / "bin" / "java"), f"-XX:FlightRecorderOptions:repository={tmp_path}",
                                *options, f"-javaagent:{guard_jar()}={guard}", agent,
                                "-cp", os.pathsep.join(map(str, (harness_jar(), *classpath))),
                                "jvmbridge.harness.AesWorkload", "120"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    states: dict[tuple[str, str], float] = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None and not _in(states, wanted):
            time.sleep(1)
            try:
                samples = scrape(port).get("jvmbridge_guard_mode_state", [])
            except OSError:  # the exporter is not serving yet
                continue
            states = {(s.labels["mode"], s.labels["state"]): s.value for s in samples}
    finally:
        stop_jvm(process)
    return states


def _in(states: dict[tuple[str, str], float], wanted: str) -> bool:
    """Every mode in state ``wanted``."""
    modes = {mode for mode, _ in states}
    return bool(modes) and all(states.get((mode, wanted)) == 1 for mode in modes)


def test_the_jmx_exporter_serves_the_guards_verified_modes(tmp_path):
    states = guarded_states(tmp_path, "modes=cbc+ctr,delay=0", wanted="verified")
    assert {key for key, value in states.items() if value == 1} == {("CBC", "verified"), ("CTR", "verified")}
    assert {state for _, state in states} == {"waiting", "testing", "verified", "wrong", "not_proven",
                                               "not_applicable"}


def test_the_jmx_exporter_serves_a_planted_wrong_mode_as_the_alert_rules_read_it(tmp_path, planted_jar):
    # The planted provider's CTR flips a byte of every result once 1000 have been computed.
    states = guarded_states(tmp_path, "modes=ctr,delay=0,provider=planted.PlantedProvider", "-Dplanted.after=1000",
                            wanted="wrong", classpath=(planted_jar,))
    assert {key for key, value in states.items() if value == 1} == {("CTR", "wrong")}


def test_the_jmx_exporter_serves_a_mode_the_provider_does_not_serve_as_not_applicable_not_wrong(tmp_path):
    # SunPCSC, a provider of every JDK, has no Cipher at all: the guard once called its CTR wrong.
    states = guarded_states(tmp_path, "modes=ctr,delay=0,provider=SunPCSC", wanted="not_applicable")
    assert {key for key, value in states.items() if value == 1} == {("CTR", "not_applicable")}
