"""`check --format openmetrics`: the metrics Prometheus reads, from documents written here, read back by
prometheus_client's two parsers (the text format node_exporter serves, and OpenMetrics); hostile
text from hosts and processes stays inside its label. What node_exporter and promtool make of them is
in tests/integration/test_prometheus.py."""
from __future__ import annotations

import os
import re

import pytest
from helpers import EVIL, REPO, SHOWN
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
from prometheus_client.parser import text_string_to_metric_families as prometheus

from jvmbridge.jvm.options import main_class
from jvmbridge.render import render
from jvmbridge.render.exposition import MAX_LABEL_CHARS
from jvmbridge.trust.writer import replace_whole

# What a host may call itself, a path a JDK may have, a command line a process may show.
HOSTILE = ['say "hi"', "C:\\new\\table", "line one\nline two", 'end\\', '\\"', "}\n# TYPE x counter\nx 1", EVIL,
           "caf\xe9 \udcff"]


def _document(host: str = "web-1", java_home: str = "/usr/lib/jvm/17", command_line: str = "java -jar app.jar",
              live_verdict: str = "disabled by a flag", guard: list | None = None) -> dict:
    def verdict(mode, status):
        return {"mode": mode, "status": status, "reason": "why", "fix": ""}

    return {"schema_version": 5, "host": host, "checked_utc": "2026-12-04T10:00:00+00:00", "duration_seconds": 12.5,
            "jvmbridge_version": "0.3.0",
            "cpu": {"model": "AMD EPYC", "emulation": None, "vm_hides": [],
                    "features": {"aes": {"present": True, "enables": "AES"}, "vaes": {"present": None, "enables": "x"}}},
            "jdks": [{"java_home": java_home, "version": "17.0.15", "options": [], "flags": {}, "evidence": {},
                      "verification": {}, "verdicts": [verdict("CBC", "active, verified"), verdict("CTR", "active but WRONG"),
                                                       verdict("GCM", "not observed")]}],
            "live_jvms": [{"pid": 4242, "java_home": java_home, "version": "17.0.15", "command_line": command_line,
                           "arguments": command_line.split(), "flags": {}, "guard": guard or [], "verdicts": [verdict("CBC", live_verdict)]},
                          {"pid": 99, "error": "pid 99: attach failed", "verdicts": [verdict("CBC", "unknown")]}],
            "exit_code": 1}


def _read(text: str) -> dict[str, dict[frozenset, float]]:
    """Each family's series (labels -> value), the same from both parsers."""
    read = [{family.name: {frozenset(s.labels.items()): s.value for s in family.samples} for family in parse(text)}
            for parse in (prometheus, openmetrics)]
    assert read[0] == read[1]
    return read[0]


def _value(metrics: dict, family: str, **labels: str) -> float:
    (value,) = [v for series, v in metrics[family].items() if set(labels.items()) <= series]
    return value


def test_every_verdict_is_a_gauge_family_with_help_type_and_the_prefix():
    text = render("check", "openmetrics", _document())
    families = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)
    assert families and all(name.startswith("jvmbridge_") and kind == "gauge" for name, kind in families)
    assert {name for name, _ in families} == set(re.findall(r"^# HELP (\S+) ", text, re.M))
    assert text.endswith("\n# EOF\n")
    metrics = _read(text)
    assert all(v == 1 for name, series in metrics.items() if name.endswith("_info") for v in series.values())
    jdk = {"kind": "jdk", "java_home": "/usr/lib/jvm/17", "version": "17.0.15"}
    assert _value(metrics, "jvmbridge_aes_intrinsics_active", mode="CBC", **jdk) == 1
    assert _value(metrics, "jvmbridge_aes_verified_correct", mode="CBC", **jdk) == 1
    # WRONG: the intrinsic is used, and its bytes are not right.
    assert _value(metrics, "jvmbridge_aes_intrinsics_active", mode="CTR", **jdk) == 1
    assert _value(metrics, "jvmbridge_aes_verified_correct", mode="CTR", **jdk) == 0
    assert _value(metrics, "jvmbridge_aes_verdict", mode="CTR", state="wrong", **jdk) == 1
    # Could not tell: no 0 or 1 that an alert would read as an answer; the state says so.
    assert not [s for s in metrics["jvmbridge_aes_intrinsics_active"] if ("mode", "GCM") in s]
    assert _value(metrics, "jvmbridge_aes_verdict", mode="GCM", state="not_observed", **jdk) == 1
    live = {"kind": "jvm", "pid": "4242", "main_class": "app.jar"}
    assert _value(metrics, "jvmbridge_aes_intrinsics_active", **live) == 0
    assert _value(metrics, "jvmbridge_target_checked", pid="99") == 0
    assert _value(metrics, "jvmbridge_cpu_feature_present", feature="aes") == 1
    assert not [s for s in metrics["jvmbridge_cpu_feature_present"] if ("feature", "vaes") in s]  # not known
    assert _value(metrics, "jvmbridge_check_duration_seconds") == 12.5
    assert _value(metrics, "jvmbridge_check_timestamp_seconds") == 1796378400
    assert _value(metrics, "jvmbridge_check_exit_code") == 1
    assert _value(metrics, "jvmbridge_build_info", version="0.3.0") == 1


def test_the_guard_is_a_state_set_per_mode():
    guard = [{"mode": "CBC", "status": "verified", "detail": "2026-12-04T10:00:00Z (...)"},
             {"mode": "CTR", "status": "WRONG", "detail": "..."}, {"mode": "GCM", "status": "said by a newer guard",
                                                                   "detail": ""}]
    metrics = _read(render("check", "openmetrics", _document(guard=guard)))
    states = metrics["jvmbridge_guard_mode_state"]
    assert {dict(s)["mode"] for s, v in states.items() if v} == {"CBC", "CTR", "GCM"}
    assert {(dict(s)["mode"], dict(s)["state"]) for s, v in states.items() if v} == {
        ("CBC", "verified"), ("CTR", "wrong"), ("GCM", "unknown")}
    assert _value(metrics, "jvmbridge_guard_running", pid="4242") == 1
    stopped = _read(render("check", "openmetrics", _document(guard=[{"mode": "", "status": "not running",
                                                                      "detail": "no AES"}])))
    assert _value(stopped, "jvmbridge_guard_running", pid="4242") == 0 and "jvmbridge_guard_mode_state" not in stopped


def test_a_mode_the_guards_provider_does_not_serve_is_not_applicable_neither_wrong_nor_unknown():
    guard = [{"mode": "CTR", "status": "not applicable", "detail": "2026-12-04T10:00:00Z (SunPCSC has no AES/CTR/NoPadding)"}]
    states = _read(render("check", "openmetrics", _document(guard=guard)))["jvmbridge_guard_mode_state"]
    assert {dict(s)["state"] for s, v in states.items() if v} == {"not_applicable"}
    # The state the JMX exporter's rules give the MBean's isNotApplicable, under the same name.
    rules = (REPO / "jvmbridge" / "monitoring" / "jmx-exporter-guard.yml").read_text()
    assert "|not_applicable)" in rules


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_text_stays_inside_its_label(hostile):
    text = render("check", "openmetrics", _document(host=hostile, java_home=hostile, command_line=f"java {hostile}"))
    # Nothing a terminal acts on, no line of its own: every line a comment or a sample of a family.
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", text)
    for line in text.splitlines():
        assert line.startswith(("# HELP jvmbridge_", "# TYPE jvmbridge_", "jvmbridge_")) or line == "# EOF", line
    metrics = _read(text)
    shown = hostile.encode("utf-8", "backslashreplace").decode() if "\udcff" in hostile else hostile
    expected = SHOWN if hostile == EVIL else shown.replace("\n", "\\n")
    assert {dict(s)["host"] for family in metrics.values() for s in family if dict(s).get("host")} == {expected}
    assert _value(metrics, "jvmbridge_aes_intrinsics_active", kind="jvm", pid="4242", java_home=expected) == 0


def test_a_label_longer_than_any_real_one_is_cut():
    metrics = _read(render("check", "openmetrics", _document(host="h" * 100_000)))
    (host,) = {dict(s)["host"] for s in metrics["jvmbridge_check_exit_code"]}
    assert host == "h" * (MAX_LABEL_CHARS - 1) + "…"


def test_a_jvm_asked_for_twice_is_one_series():
    document = _document()
    document["live_jvms"].append(dict(document["live_jvms"][0]))  # --pid 4242 --all-jvms
    text = render("check", "openmetrics", document)
    samples = [line for line in text.splitlines() if not line.startswith("#")]
    assert len(samples) == len(set(line.rsplit(" ", 1)[0] for line in samples))


@pytest.mark.parametrize("arguments, runs", [
    ("/usr/bin/java -Xmx1g -cp a.jar:b.jar com.example.Main --port 8080", "com.example.Main"),
    ("java -classpath lib/* -Dx=y org.App", "org.App"),
    ("java -XX:-UseAES -jar /srv/app.jar serve", "/srv/app.jar"),
    ("java --add-opens java.base/java.lang=ALL-UNNAMED -m my.mod/my.Main", "my.mod/my.Main"),
    ("/opt/launcher", ""), ("java -jar", ""), ("", ""),
])
def test_main_class_is_what_the_arguments_run(arguments, runs):
    assert main_class(arguments.split()) == runs


def test_an_argument_with_a_space_is_one_argument(tmp_path):
    """`-Dx="a b"` is one argument to the kernel: the label is the class the JVM runs, never "b"."""
    document = _document(command_line='java -Dx=a b org.App')
    document["live_jvms"][0]["arguments"] = ["java", "-Dx=a b", "org.App"]
    jvm = [line for line in render("check", "openmetrics", document).splitlines() if 'pid="4242"' in line]
    assert jvm and all('main_class="org.App"' in line for line in jvm), jvm


def test_a_file_is_replaced_whole_and_never_through_a_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not to be written")
    target = tmp_path / "jvmbridge.prom"
    target.symlink_to(elsewhere)  # planted by someone who hopes root writes through it
    replace_whole(target, "# EOF\n", mode=0o644)
    assert not target.is_symlink() and target.read_text() == "# EOF\n"
    assert elsewhere.read_text() == "not to be written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "jvmbridge.prom"]  # no partial file left
    assert os.stat(target).st_mode & 0o777 == 0o644  # node_exporter (its own user) reads it
