"""`report --format html` and `--export-html` in a real browser (Debian's headless chromium, tests/browser.py):
each page loads with no request but itself and no console message, the DOM holds every row,
hostile text from a host stays text. A screenshot of each page is saved where a person can look
at it: $JVMBRIDGE_SCREENSHOTS, else the test's own folder (the path is printed)."""
from __future__ import annotations

import importlib.util
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import browser
import pytest
from helpers import cannot, run_cli

if not browser.chromium():
    cannot("needs chromium: `apt-get install chromium` (Debian's; .ci/run installs it)")

ROWS = "[...document.querySelectorAll('table tbody tr')].map(r => [...r.cells].map(c => c.textContent))"
NOTHING_RUN = "document.scripts.length + document.querySelectorAll('iframe, object, embed, img, link').length"


def _look(page: Path, name: str, tmp_path: Path) -> browser.Loaded:
    shots = Path(os.environ.get("JVMBRIDGE_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    loaded = browser.load(page, {"rows": ROWS, "embedded": NOTHING_RUN, "svg": "document.querySelectorAll('svg').length",
                                 "title": "document.title", "text": "document.body.innerText"}, shots / f"{name}.png")
    print(f"screenshot: {shots / f'{name}.png'}")
    assert loaded.requests == [page.resolve().as_uri()], loaded.requests  # nothing fetched but the page
    assert loaded.console == [], loaded.console
    assert loaded.values["embedded"] == 0
    assert (shots / f"{name}.png").stat().st_size > 10_000
    return loaded


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("runs")
    runs = [folder / f"run{i}.jsonl" for i in (1, 2)]
    # pyca beside the C loop: rounds of 0.1 s (openssl speed's are whole seconds). The two runs at once:
    # their time is mostly warm-ups that stop at a time limit (pyca's never settle), not at a count
    # of work, and the page reads no figure but that each has its interval or says it has none.
    with ThreadPoolExecutor(max_workers=len(runs)) as both:
        done = list(both.map(lambda path: run_cli(
            "compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--engine", "pyca", "--sizes",
            "16,1024", "--round-time", "0.1", "--rounds", "2", "--forks", "2", "--max-forks", "2", "-q", "-o", str(path)),
            runs))
    assert all(each.returncode == 0 for each in done), [each.stderr for each in done]
    return runs


def test_a_report_of_two_runs_as_a_page(two_runs, tmp_path):
    page = tmp_path / "report.html"
    done = run_cli("report", *map(str, two_runs), "--export-html", str(page), "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert f"html written to {page}" in done.stderr
    loaded = _look(page, "report-two-runs", tmp_path)
    rows = loaded.values["rows"]
    assert [cells[0] for cells in rows] == [row["configuration"] for row in document["comparison"]]
    assert len(rows) == 8  # two engines x on/off x two sizes
    # Each figure with its interval (or, a row left with one fork on a noisy machine, saying it has
    # none), each ratio as the table says it.
    assert all(cell.count("±") == 1 or cell.endswith(" no interval") for cells in rows for cell in cells[1:3]), rows
    assert [cells[3] for cells in rows] == [_said(row["run 2 vs run 1"]) for row in document["comparison"]]
    assert loaded.values["title"].startswith("jvmbridge report: 2 columns")
    # The figure where matplotlib is installed (the plot extra); else the page says how to get it.
    if importlib.util.find_spec("matplotlib"):
        assert loaded.values["svg"] == 1
    else:
        assert loaded.values["svg"] == 0 and 'pip install "jvmbridge[plot]"' in loaded.values["text"]


def _said(ratio: dict) -> str:
    if ratio["high"] is None:  # a side without an interval: JSON's null for an unbounded range
        return f"{ratio['times']:.2f}x (no interval)"
    shown = f"{ratio['times']:.2f}x [{ratio['low']:.2f}-{ratio['high']:.2f}]"
    return shown + (" not significant" if not ratio["significant"] else
                    " faster" if ratio["times"] > 1 else " slower")


def test_a_fleet_page_colours_each_verdict_and_keeps_hostile_text_as_text(tmp_path):
    folder = tmp_path / "fleet"
    folder.mkdir()
    done = run_cli("check", "--mode-time", "3", "--format", "json", "-q", "--host-name", "this-host")
    assert done.returncode in (0, 1), done.stderr
    (folder / "this-host.json").write_text(done.stdout)
    hostile = "<script>alert(1)</script><img src=https://example.com/x.png>\x1b[31m"
    (folder / "evil.json").write_text(json.dumps({"host": "web-1", "jdks": [{  # named by its file, not its text
        "java_home": "/opt/<b>jdk</b>", "version": "17", "options": [], "verdicts": [
            {"mode": "CTR", "status": "active but WRONG", "reason": hostile, "fix": "update"},
            {"mode": "GCM", "status": "disabled by a flag", "reason": "-UseAES", "fix": "drop -XX:-UseAES"}]}]}))
    (folder / "gone.json").write_text(json.dumps({"host": "gone", "unchecked": "ssh: no route to host"}))
    page = tmp_path / "fleet.html"
    done = run_cli("report", str(folder), "--format", "html")
    assert done.returncode in (1, 2), done.stderr  # a WRONG verdict, a host not checked
    page.write_text(done.stdout)
    loaded = _look(page, "report-fleet", tmp_path)
    rows = loaded.values["rows"]
    checked = json.loads((folder / "this-host.json").read_text())
    mine = [cells for cells in rows if cells[0] == "this-host"]
    assert len(mine) == sum(len(part["verdicts"]) for part in (*checked["jdks"], *checked["live_jvms"]))
    evil = [cells for cells in rows if cells[0] == "evil"]
    assert evil[0][4] == hostile.replace("\x1b", "\\x1b")  # shown as it says, escaped
    assert [cells[3] for cells in evil] == ["active but WRONG", "disabled by a flag"]
    assert ["gone", "-", "-", "not checked", "ssh: no route to host", ""] in rows
    counts = browser.load(page, {"wrong": "document.querySelectorAll('tr.wrong').length",
                                 "off": "document.querySelectorAll('tr.off').length"}, tmp_path / "again.png").values
    assert counts == {"wrong": 1, "off": 1 + sum(cells[3] in ("disabled by a flag", "unsupported by the CPU")
                                                 for cells in mine)}
