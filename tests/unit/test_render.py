"""The render registry: every format a command offers exists, and none hides outside the table."""
from __future__ import annotations

import importlib

import pytest

from jvmbridge.render import FORMATS, render
from jvmbridge.render.text import markdown


@pytest.mark.parametrize("document", FORMATS)
def test_every_listed_format_has_its_renderer_and_no_other_exists(document):
    module = importlib.import_module(f"jvmbridge.render.{document}")
    offered = {name.removeprefix("render_") for name in dir(module) if name.startswith("render_")}
    assert offered == set(FORMATS[document])


def test_a_format_a_document_lacks_is_refused():
    with pytest.raises(ValueError, match="check has no html format; it has table, markdown, csv, json"):
        render("check", "html", {})


def test_markdown_escapes_pipes_inside_cells():
    assert markdown([["a", "b"], ["x | y", "z"]]) == ["| a | b |", "|---|---|", "| x \\| y | z |"]


def test_jdks_in_every_format():
    rows = [{"found_in": "PATH", "java_home": "/jdk", "version": "17.0.15", "vendor": "Debian", "arch": "x86_64",
             "jpype": True, "why_not": None}]
    assert render("jdks", "table", rows).splitlines()[1].split() == ["PATH", "/jdk", "17.0.15", "Debian", "x86_64", "yes"]
    assert render("jdks", "markdown", rows).splitlines()[2] == "| PATH | /jdk | 17.0.15 | Debian | x86_64 | yes |"
    assert render("jdks", "csv", rows).splitlines()[1] == "PATH,/jdk,17.0.15,Debian,x86_64,True,"
    assert '"java_home": "/jdk"' in render("jdks", "json", rows)


def test_the_widest_column_wraps_to_fit_and_keeps_every_word_and_the_rows_apart():
    from jvmbridge.render.text import align

    reason = "JIT used CounterMode::implCrypt (intrinsic) within 0.8 s; 576 cases x 8 call patterns = OpenSSL after the JIT"
    lines = align([["mode", "verdict", "reason"], ["CTR", "active, verified", reason], ["GCM", "active", "short"]],
                  width=60)
    assert all(len(line) <= 60 for line in lines) and len(lines) > 3
    start = lines[0].index("reason")
    assert lines[1].startswith("CTR") and lines[-1].startswith("GCM")
    assert " ".join(line[start:] for line in lines[1:-1]).split() == reason.split()  # every word, in order
    assert all(line[:start].strip() == "" for line in lines[2:-1])  # the row's other cells once, on its first line
    assert align([["a", "b"], ["x", reason]], width=None)[1] == f"x  {reason}"  # a pipe or a file: one line
    # A path breaks after a "/".
    assert align([["home", "v"], ["/usr/lib/jvm/java-17-openjdk-amd64", "17"]], width=30) == [
        "home                        v", "/usr/lib/jvm/               17", "java-17-openjdk-amd64"]
    # Too little room for the column (WRAP_LEAST): the line is left long, not cut into slivers.
    assert align([["a" * 50, "b"], ["x", reason]], width=60)[1].endswith(reason)


def test_check_and_fleet_tables_fit_a_narrow_terminal():
    from jvmbridge.fleet.report import fleet_of

    long = "flags on (running JVM: flags only, no JIT evidence); UseAESCTRIntrinsics not listed, so at its default"
    document = {"host": "h", "exit_code": 1, "live_jvms": [],
                "cpu": {"model": "some CPU", "features": {"aes": {"present": True, "enables": "AES-NI"}}},
                "jdks": [{"java_home": "/usr/lib/jvm/jdk", "version": "17", "options": [],
                          "flags": {"UseAES": {"value": "true", "origin": "default"}},
                          "verdicts": [{"mode": "CTR", "status": "not observed", "reason": long, "fix": "wait longer"}]}]}
    for name, data in (("check", document), ("fleet", fleet_of([document]))):
        wide = render(name, "table", data)
        narrow = render(name, "table", data, width=100)
        assert max(map(len, wide.splitlines())) > 100 >= max(map(len, narrow.splitlines())), name
        assert sorted(narrow.split()) == sorted(wide.split())  # the same words, only the lines broken


def test_the_header_names_openssl_once_where_its_library_is_the_same_version():
    from types import SimpleNamespace

    from jvmbridge.engines import ENGINES

    speed = ENGINES["openssl-cli"]
    same = SimpleNamespace(implementation="OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)")
    other = SimpleNamespace(implementation="OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.20 1 Mar 2026)")
    assert speed.implementation_text(same) == "OpenSSL 3.0.19 27 Jan 2026"
    assert speed.implementation_text(other) == other.implementation  # a command on another libcrypto says so


def test_the_jvm_option_variables_left_out_are_shown_by_name_never_by_value():
    """A password in JAVA_TOOL_OPTIONS was printed in compare's header, kept in the run file and shown
    by `report`; runs saved then still hold it, and report shows only its name."""
    from jvmbridge.render.compare import _circumstances

    for recorded in (["JAVA_TOOL_OPTIONS"], {"JAVA_TOOL_OPTIONS": "-Djavax.net.ssl.keyStorePassword=hunter2"}):
        lines = _circumstances({"cpu": {}, "environment_left_out": recorded})
        assert [line for line in lines if line.startswith("Env")] == [
            "Env      left out of every measured JVM: JAVA_TOOL_OPTIONS (give such options with --jvm-arg to measure "
            "with them)"]
