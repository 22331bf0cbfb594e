"""Every Markdown document renders as its author meant: parsed by a real renderer (markdown-it-py
with tables), its table has every row and nothing else, and the lines around it keep their lines."""
from __future__ import annotations

import json

from helpers import FakeEngine, structure, workloads

from jvmbridge.render import render
from jvmbridge.render.text import fence_prose


def test_a_note_after_a_table_is_not_read_as_its_row():
    text = fence_prose("| a | b |\n|---|---|\n| 1 | 2 |\nNote: 2 measurement(s) repeat a configuration\n")
    tables, fences = structure(text)
    assert tables == [1] and fences == ["Note: 2 measurement(s) repeat a configuration\n"]


def test_lines_of_a_header_keep_their_lines_and_backticks_stay_inside():
    header = "jvmbridge compare: AES-256-CBC\nCPU      AMD EPYC [aes]\nEngine   `openssl speed` ```x```\n"
    _, fences = structure(fence_prose(header))
    assert fences == [header]


def test_jdks_and_fleet_render_every_row():
    rows = [{"found_in": "PATH", "java_home": f"/jdk{i}", "version": "17.0.15", "vendor": "Debian", "arch": "x86_64",
             "jpype": True, "why_not": None} for i in range(3)]
    assert structure(render("jdks", "markdown", rows))[0] == [3]
    from jvmbridge.fleet.report import fleet_of

    verdict = {"mode": "CBC", "status": "active", "reason": "JIT used | pipes", "fix": ""}
    document = {"host": "web-1", "jdks": [{"java_home": "/jdk", "version": "17", "verdicts": [verdict] * 2}],
                "live_jvms": [], "exit_code": 0}
    tables, fences = structure(render("fleet", "markdown", fleet_of([json.loads(json.dumps(document))])))
    assert tables == [2] and fences and fences[-1].startswith("1 host")


def test_a_compare_document_renders_its_rows_and_keeps_its_sections(monkeypatch, tmp_path):
    from jvmbridge.comparison.runner import plan, run
    from jvmbridge.engines import ENGINES, Matrix

    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    comparison = run(plan(workloads(), Matrix(engines=("one",))), output=tmp_path / "run.jsonl")
    tables, fences = structure(render("compare", "markdown", comparison))
    assert tables == [len(comparison.results)]
    # The answer first (its ratios, one a line), then the header, line by line.
    assert fences[0].startswith("fake one, messages, 16 B: fake acceleration makes it ")
    assert fences[1].startswith("jvmbridge ") and "\nCPU      " in fences[1]
    assert any(fence.startswith("Read back from the running engines") for fence in fences)
    # Every ratio fits the headline: below the table only how they were computed, not them again.
    assert any(fence.startswith("The headline's ratios: ") for fence in fences)


def test_a_hosts_line_separators_neither_cut_a_row_nor_reach_a_terminal():
    """U+2028, U+2029 and the controls str.splitlines() breaks at (\\x0b \\x0c \\x1c-\\x1e \\x85) in a
    host's text cut its row in two: its verdict fell out of the table into a fence."""
    separators = "\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x85"
    rows = [{"found_in": "PATH", "java_home": f"/jdk{i}{separator}| evil | row |", "version": "17.0.15",
             "vendor": "Debian", "arch": "x86_64", "jpype": True, "why_not": None}
            for i, separator in enumerate(separators)]
    text = render("jdks", "markdown", rows)
    assert structure(text)[0] == [len(separators)]
    for shown in (text, render("jdks", "table", rows)):
        assert not set(separators) & set(shown)
