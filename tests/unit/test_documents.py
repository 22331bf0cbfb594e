"""Every document in every format, from random valid data, parsed back as its readers parse it:
JSON strictly (no NaN or Infinity), CSV with the csv module, Markdown with a renderer (tables with
every row, no line joined into a paragraph), HTML with an HTML parser (every row, no tag from the
data), the table for people line by line. Every row present.

The data are drawn, the renderers are the real ones; compare's results come from the real runner
on fake engines (tests/helpers.py: they stand in for engines, never test one).
"""
from __future__ import annotations

import csv
import html.parser
import io
import itertools
import json
import re

import pandas as pd
from helpers import FakeEngine, structure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jvmbridge.comparison.runner import plan, run
from jvmbridge.engines import ENGINES, Matrix
from jvmbridge.fleet.report import fleet_of
from jvmbridge.intrinsics.verdict import Status
from jvmbridge.jvm.options import main_class
from jvmbridge.render import FORMATS, render
from jvmbridge.render.flags import FlagsDocument
from jvmbridge.render.runs import RunsDocument
from jvmbridge.render.text import printable
from jvmbridge.report.history import compare_runs, tidy_frame
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import combinations
from jvmbridge.saved.store import read

EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Text as hosts, processes and files hand it over: pipes, commas, quotes, backticks, newlines, controls.
TEXT = st.text(st.sampled_from(list("ab19 |,;\"'`*_#<>\\\n\t\x1b\u202e-.:/")), min_size=1, max_size=12)


def _strict(text: str):
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def _metrics(text: str) -> dict[str, list[tuple[dict, float]]]:
    """Each family's samples as Prometheus's text parser and its OpenMetrics parser read them: the same."""
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
    from prometheus_client.parser import text_string_to_metric_families as prometheus

    read = [{family.name: [(s.labels, s.value) for s in family.samples] for family in parse(text)}
            for parse in (prometheus, openmetrics)]
    assert read[0] == read[1]
    return read[0]


def _labels(**labels: str) -> frozenset:
    """A series' labels as the parsers give them back: shown as printable() shows them, empty ones absent."""
    return frozenset((name, printable(value)) for name, value in labels.items() if value)


def _markdown_tables(text: str) -> list[int]:
    tables, _ = structure(text)  # raises on any paragraph a renderer would join
    return tables


class _Cells(html.parser.HTMLParser):
    """Each body row's cells (their text) of the table with ``table_id``, and every tag seen."""

    def __init__(self, table_id: str):
        super().__init__(convert_charrefs=True)
        self.table_id, self.inside, self.cell = table_id, False, None
        self.rows: list[list[str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.inside = dict(attrs).get("id") == self.table_id
        elif self.inside and tag == "tr" and self.body:
            self.rows.append([])
        elif self.inside and tag == "td":
            self.cell = ""
        elif tag == "tbody":
            self.body = True
        elif tag == "thead":
            self.body = False

    def handle_endtag(self, tag):
        if tag == "td" and self.inside and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None
        elif tag == "table":
            self.inside = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

    body = False


def _html_rows(text: str, table_id: str) -> list[list[str]]:
    """The page's table, as a browser's parser reads it; no tag but the page's own (none from data)."""
    cells = _Cells(table_id)
    cells.feed(text)
    assert not {"script", "img", "iframe", "link", "object"} & set(cells.tags), cells.tags
    assert text.count("<svg") <= 1
    return cells.rows


def _every_format(document: str, data) -> dict[str, str]:
    assert FORMATS[document][:4] == ("table", "markdown", "csv", "json")
    assert set(FORMATS[document][4:]) <= {"jmh", "html", "openmetrics"}  # each read back by the test of its document
    return {output_format: render(document, output_format, data) for output_format in FORMATS[document]}


def github_action_benchmark(text: str) -> list[dict]:
    """github-action-benchmark's reading of a `jmh` input (extractJmhResult, src/extract.ts): a
    result per entry named by benchmark and params (JSON.stringify, no spaces)."""
    return [{"name": b["benchmark"] + (" ( " + json.dumps(b["params"], separators=(",", ":")) + " )" if b["params"] else ""),
             "value": b["primaryMetric"]["score"], "unit": b["primaryMetric"]["scoreUnit"],
             "extra": f"iterations: {b['measurementIterations']}\nforks: {b['forks']}\nthreads: {b['threads']}"}
            for b in _strict(text)]


def jmh_visualizer(text: str) -> list[tuple[str, str, dict]]:
    """jmh-visualizer's reading (src/javascript/functions/parse.js): the class is the benchmark less
    its last dotted part, the method that part; params joined as "method k=v ..." and split back
    on spaces and "=". Each entry's (class, method, params) as it reads them back."""
    read = []
    for b in _strict(text):
        *package, method = b["benchmark"].split(".")
        key = method + "".join(f" {k}={v}" for k, v in b["params"].items())
        name, *pairs = key.split(" ")
        read.append((".".join(package), name, dict(pair.split("=") for pair in pairs)))
        metric = b["primaryMetric"]
        assert isinstance(metric["score"], float) and metric["scoreUnit"] == "ns/op" and b["mode"] == "avgt"
        assert len(metric["rawData"]) == b["forks"] and all(map(len, metric["rawData"]))
    return read


# compare and report ------------------------------------------------------------------------------

@st.composite
def comparisons(draw):
    engines = {f"e{i}": FakeEngine(f"e{i}", draw(st.floats(10, 1000)), noise=draw(st.sampled_from([0.0, 0.001, 0.3])),
                                   rank=None if i == 0 else i)
               for i in range(draw(st.integers(1, 3)))}
    for engine in engines.values():
        engine.label = f"fake {engine.key} {draw(TEXT)}"  # engines are told apart by their labels
    ciphers = draw(st.lists(st.sampled_from([(128, "cbc"), (256, "gcm"), (192, "ctr")]), min_size=1, max_size=2,
                            unique=True))
    sizes = draw(st.lists(st.sampled_from([0, 16, 38, 1024, 16384]), min_size=1, max_size=3, unique=True))
    shapes = draw(st.lists(st.sampled_from(["message", "stream"]), min_size=1, max_size=2, unique=True))
    directions = draw(st.lists(st.sampled_from(["encrypt", "decrypt"]), min_size=1, max_size=2, unique=True))
    # One fork (no interval) or several: more only make the fake run longer (each fork is CYCLES cycles of
    # every row, and the conductor's judging of them grows with forks x slices), not its documents.
    forks = draw(st.integers(1, 3))
    sampling = Sampling(rounds=draw(st.integers(1, 4)), forks=forks, max_forks=forks)
    return engines, combinations(ciphers, directions, sizes, shapes, sampling)


@EXAMPLES
@given(drawn=comparisons())
def test_compare_and_report_of_it_in_every_format_keep_every_row(drawn, tmp_path, monkeypatch):
    engines, workloads = drawn
    for key, engine in engines.items():
        monkeypatch.setitem(ENGINES, key, engine)
    saved = tmp_path / "run.jsonl"
    saved.unlink(missing_ok=True)
    comparison = run(plan(workloads, Matrix(engines=tuple(engines))), output=saved)
    rows = len(comparison.results)
    assert rows == 2 * len(engines) * len(workloads)  # on and off, each engine, each workload
    out = _every_format("compare", comparison)
    assert len(_strict(out["json"])["results"]) == rows
    assert len(_csv_rows(out["csv"])) == rows
    assert _markdown_tables(out["markdown"])[0] == rows
    results = github_action_benchmark(out["jmh"])
    assert len({r["name"] for r in results}) == rows  # every row its own result, none merged
    assert all(isinstance(r["value"], float) and r["unit"] == "ns/op" for r in results)
    visualized = jmh_visualizer(out["jmh"])
    assert [params for _, _, params in visualized] == [b["params"] for b in _strict(out["jmh"])]  # split back intact
    assert all(cls and method in ("message", "stream") for cls, method, _ in visualized)
    table = out["table"].splitlines()
    header = next(i for i, line in enumerate(table) if line.split()[:2] == ["#", "engine"])
    assert [line.split()[0] for line in table[header + 1:header + 1 + rows]] == [str(i + 1) for i in range(rows)]
    # Each ratio said once: the headline's above the table, the rest under its heading, as many as it says.
    title = next(i for i, line in enumerate(table) if line.startswith("jvmbridge "))
    above = [line for line in table[:title] if line and not line.startswith(("... ", "host speed"))]
    heading = next((i for i, line in enumerate(table) if line.startswith(("Ratios (", "More ratios ("))), None)
    below = [] if heading is None else list(itertools.takewhile(str.strip, table[heading + 1:]))
    more = re.search(r"^\.\.\. (\d+) more ratios under the table$", out["table"], re.MULTILINE)
    assert len(above) + len(below) == len(_strict(out["json"])["ratios"])
    assert (int(more.group(1)) if more else 0) == (len(below) if above else 0)

    loaded = read([saved])
    frame = tidy_frame(loaded)
    document = RunsDocument(compare_runs(frame, "run"), loaded.problems, frame)
    out = _every_format("runs", document)
    assert len(_strict(out["json"])["comparison"]) == rows
    assert len({r["name"] for r in github_action_benchmark(out["jmh"])}) == rows
    assert len(jmh_visualizer(out["jmh"])) == rows
    assert [cells[0] for cells in _html_rows(out["html"], "comparison")] == [
        printable(c) for c in document.comparison.table.configuration]
    assert len(_csv_rows(out["csv"])) == rows
    assert _markdown_tables(out["markdown"])[0] == rows
    assert len(out["table"].splitlines()) >= rows + 1


# check and fleet ---------------------------------------------------------------------------------

VERDICTS = st.lists(st.fixed_dictionaries({"mode": st.sampled_from(["CBC", "CTR", "GCM"]),
                                           "status": st.sampled_from([s.value for s in Status]),
                                           "reason": TEXT, "fix": st.one_of(st.just(""), TEXT)}),
                    min_size=1, max_size=3)
FLAGS = st.dictionaries(st.sampled_from(["UseAES", "UseAESIntrinsics", "UseAESCTRIntrinsics"]),
                        st.fixed_dictionaries({"value": st.sampled_from(["true", "false"])}), min_size=1)
JDK = st.fixed_dictionaries({"java_home": TEXT, "version": TEXT, "options": st.lists(TEXT, max_size=2),
                             "flags": FLAGS, "verdicts": VERDICTS})
GUARD = st.lists(st.fixed_dictionaries({"mode": st.sampled_from(["CBC", "CTR"]),
                                        "status": st.sampled_from(["verified", "WRONG", "not proven", "testing"]),
                                        "detail": TEXT}), max_size=2)
LIVE = st.fixed_dictionaries({"pid": st.integers(1, 99999), "java_home": TEXT, "command_line": TEXT,
                              "arguments": st.lists(TEXT, max_size=4), "flags": FLAGS, "verdicts": VERDICTS},
                             optional={"guard": GUARD})
CPU = st.fixed_dictionaries({"model": TEXT, "features": st.dictionaries(
    st.sampled_from(["aes", "avx", "vaes"]),
    st.fixed_dictionaries({"present": st.sampled_from([True, False, None]), "enables": TEXT}), min_size=1)})
CHECK = st.fixed_dictionaries({"host": TEXT, "cpu": CPU, "jdks": st.lists(JDK, max_size=2),
                               "live_jvms": st.lists(LIVE, max_size=2), "exit_code": st.sampled_from([0, 1, 2])})


def _verdicts(document: dict) -> int:
    return sum(len(part["verdicts"]) for part in (*document["jdks"], *document["live_jvms"]))


@EXAMPLES
@given(document=CHECK)
def test_a_check_document_in_every_format_keeps_every_verdict(document):
    out = _every_format("check", document)
    assert _strict(out["json"]) == document
    assert len(_csv_rows(out["csv"])) == max(_verdicts(document), 1)  # a host with nothing found is a row too
    parts = [*document["jdks"], *document["live_jvms"]]
    assert _markdown_tables(out["markdown"]) == [len(document["cpu"]["features"]),
                                                 *(len(part["verdicts"]) for part in parts)]
    assert len(out["table"].splitlines()) >= 2 + len(document["cpu"]["features"]) + _verdicts(document)
    # One state set per JDK or JVM and mode (the same one twice is one series), each in exactly one state.
    host = document["host"]
    targets = [({"host": host, "kind": "jdk", "java_home": jdk["java_home"], "version": jdk["version"],
                 "options": " ".join(jdk["options"])}, jdk) for jdk in document["jdks"]]
    targets += [({"host": host, "kind": "jvm", "pid": str(live["pid"]), "java_home": live["java_home"],
                  "main_class": main_class(live["arguments"])}, live) for live in document["live_jvms"]]
    states = _metrics(out["openmetrics"])["jvmbridge_aes_verdict"] if _verdicts(document) else []
    series = {_labels(**target, mode=v["mode"]) for target, part in targets for v in part["verdicts"]}
    assert {frozenset(labels.items()) - {("state", labels["state"])} for labels, _ in states} == series
    assert sum(value for _, value in states) == len(series)


@EXAMPLES
@given(documents=st.lists(st.one_of(CHECK, st.fixed_dictionaries({"host": TEXT, "unchecked": TEXT})),
                          min_size=1, max_size=3))
def test_a_fleet_in_every_format_keeps_every_host_and_verdict(documents):
    fleet = fleet_of(documents)
    rows = sum(_verdicts(d) for d in documents if "jdks" in d) + len(fleet.unchecked) + len(fleet.without_jvms)
    out = _every_format("fleet", fleet)
    parsed = _strict(out["json"])
    assert set(parsed["hosts"]) == {d["host"] for d in documents}
    assert len(_csv_rows(out["csv"])) == rows
    assert _markdown_tables(out["markdown"]) == [rows]
    assert len(out["table"].splitlines()) == 1 + rows + 2
    page = _html_rows(out["html"], "fleet")
    assert len(page) == rows and {cells[0] for cells in page} == {printable(d["host"]) for d in documents}
    metrics = _metrics(out["openmetrics"])
    assert {frozenset(labels.items()) for labels, _ in metrics["jvmbridge_host_checked"]} == {
        _labels(host=host) for host in fleet.hosts}
    states = metrics.get("jvmbridge_aes_verdict", [])
    series = {_labels(host=r.host, target=r.jvm, mode=r.mode) for r in fleet.rows}
    assert {frozenset(labels.items()) - {("state", labels["state"])} for labels, _ in states} == series
    assert sum(value for _, value in states) == len(series)


# verify ------------------------------------------------------------------------------------------

FINDING = st.fixed_dictionaries({
    "pattern": st.sampled_from(["oneshot", "updates", "inplace"]), "key_bits": st.sampled_from([128, 256]),
    "direction": st.sampled_from(["encrypt", "decrypt"]), "size": st.integers(0, 2000), "what": TEXT,
    "groups": st.integers(1, 6), "crash": st.none(), "attribution": TEXT,
    "known_bug_description": st.one_of(st.none(), TEXT), "culprit_flag": st.one_of(st.none(), TEXT),
    "workaround": st.one_of(st.none(), TEXT)})
MODE = st.fixed_dictionaries({
    "mode": st.sampled_from(["CBC", "CTR", "GCM"]), "status": st.sampled_from(["correct", "WRONG", "CRASHED", "error"]),
    "passes": st.integers(0, 9), "compiled_passes": st.integers(0, 9), "groups": st.just(6),
    "mode_intrinsics_seen": st.lists(TEXT, max_size=2), "intrinsics_expected": TEXT,
    "proven_after_seconds": st.one_of(st.none(), st.floats(0, 100)), "seconds": st.floats(0, 100),
    "error": st.one_of(st.none(), TEXT), "intrinsic_off": st.one_of(st.none(), TEXT),
    "findings": st.lists(FINDING, max_size=2)})
VERIFY = st.fixed_dictionaries({
    "jvmbridge_version": st.just("0"), "cpu": st.fixed_dictionaries({"model": TEXT, "features": st.lists(TEXT)}),
    "sweep": st.fixed_dictionaries({"reference": TEXT, "sizes": st.integers(1, 99), "smallest": st.just(0),
                                    "largest": st.integers(1, 10**6), "key_bits": st.just([128, 192, 256]),
                                    "directions": st.just(["encrypt", "decrypt"]),
                                    "patterns": st.just(["oneshot", "updates", "inplace"]),
                                    "compiled_passes": st.integers(1, 3), "budget_seconds": st.floats(1, 60)}),
    "jdks": st.lists(st.fixed_dictionaries({"java_home": TEXT, "version": TEXT, "options": st.lists(TEXT, max_size=2),
                                            "provider_class": st.one_of(st.none(), TEXT),
                                            "modes": st.lists(MODE, min_size=1, max_size=3)}), min_size=1, max_size=2),
    "exit_code": st.sampled_from([0, 1, 2])})


@EXAMPLES
@given(document=VERIFY)
def test_a_verify_document_in_every_format_keeps_every_jdk_and_mode(document):
    out = _every_format("verify", document)
    assert _strict(out["json"]) == document
    assert len(_csv_rows(out["csv"])) == sum(len(jdk["modes"]) for jdk in document["jdks"])
    assert _markdown_tables(out["markdown"]) == [len(jdk["modes"]) for jdk in document["jdks"]]
    assert all(mode["mode"] in out["table"] for jdk in document["jdks"] for mode in jdk["modes"])


# flags and jdks ----------------------------------------------------------------------------------

@EXAMPLES
@given(sources=st.lists(TEXT, min_size=1, max_size=3, unique=True),
       names=st.lists(st.sampled_from(["UseAES", "UseAESIntrinsics", "UseGHASHIntrinsics", "UseAVX"]), min_size=1,
                      unique=True),
       values=st.lists(TEXT, min_size=12, max_size=12), notes=st.lists(TEXT, max_size=2))
def test_flags_in_every_format_keep_every_flag_and_source(sources, names, values, notes):
    rows = [{"source": source, "type": "bool", "name": name, "value": values[(i + j) % 12], "kind": "product",
             "origin": "default", "why": "x"} for i, source in enumerate(sources) for j, name in enumerate(names)]
    document = FlagsDocument(pd.DataFrame(rows), sources, notes)
    out = _every_format("flags", document)
    assert len(_strict(out["json"])["flags"]) == len(rows)
    assert len(_csv_rows(out["csv"])) == len(rows)
    assert _markdown_tables(out["markdown"]) == [len(names)]
    assert len(out["table"].splitlines()) == 1 + len(names) + len(notes)


@EXAMPLES
@given(rows=st.lists(st.fixed_dictionaries({
    "found_in": TEXT, "java_home": TEXT, "version": TEXT, "vendor": TEXT, "arch": TEXT, "jpype": st.booleans(),
    "why_not": st.one_of(st.none(), TEXT)}), min_size=1, max_size=4))
def test_jdks_in_every_format_keep_every_jdk(rows):
    out = _every_format("jdks", rows)
    assert _strict(out["json"]) == rows
    assert len(_csv_rows(out["csv"])) == len(rows)
    assert _markdown_tables(out["markdown"]) == [len(rows)]
    assert len(out["table"].splitlines()) == 1 + len(rows)
