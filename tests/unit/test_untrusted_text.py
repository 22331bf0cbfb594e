"""Text from hosts and processes reaches the terminal escaped: a host name, a command line, a flag
listing or a fleet document carrying terminal escape sequences is printed as what it says.
JSON keeps it exact (and escapes it itself).

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_untrusted_text.py."""
from __future__ import annotations

import ast
import csv
import html
import importlib
import io
import json
import os
import re
import subprocess
import sys

import pytest
from helpers import EVIL, FORMULAS, REPO, SHOWN, SHOWN_AS_LINES, run_cli, run_cli_here
from markdown_it import MarkdownIt

from jvmbridge.cli.say import say, say_lines
from jvmbridge.fleet.report import fleet_of
from jvmbridge.render import FORMATS, render
from jvmbridge.render.text import align, csv_cell, fence_prose, markdown, printable


def test_printable_escapes_controls_and_reordering_marks_and_keeps_the_rest():
    assert printable(EVIL) == SHOWN
    assert printable("tab\there\r") == r"tab\there\r"
    assert printable("a\nb", lines=True) == "a\nb"
    assert printable("café ✓ 17.0.15+6-Debian") == "café ✓ 17.0.15+6-Debian"


def test_cells_escape_newlines_too():
    assert align([["host"], [EVIL]])[1] == SHOWN
    assert _cells_shown("\n".join(markdown([["host"], [EVIL]]))) == ["host", SHOWN]


def _cells_shown(markdown_text: str) -> list[str]:
    """The text of each table cell as a Markdown renderer shows it."""
    page = MarkdownIt("commonmark").enable("table").render(markdown_text)
    return [html.unescape(cell) for cell in re.findall(r"<t[hd]>(.*?)</t[hd]>", page)]


def test_markdown_shows_a_link_or_an_image_from_a_host_as_text():
    """`![b](http://evil/b.png)` in a JVM's command line (or anything else from a host) is shown as
    written: no image fetched from anywhere, no link, no code span, no cell of its own."""
    injected = ["![b](http://evil/b.png)", "[here](http://evil/)", "`code`", "a | b", "\\[x](y)", "\\![b](c)"]
    document = _check_document()
    document["live_jvms"][0]["command_line"] = "java " + " ".join(injected)
    for text in (render("check", "markdown", document), render("fleet", "markdown", fleet_of([document]))):
        page = MarkdownIt("commonmark").enable("table").render(text)
        assert "<img" not in page and "<a " not in page and "<code>" not in page, page
        assert " ".join(injected)[:40] in html.unescape(page), page


def test_a_line_that_only_starts_like_a_table_is_fenced():
    page = MarkdownIt("commonmark").enable("table").render(fence_prose("| ![b](http://evil/b.png)\n"))
    assert "<img" not in page and "![b](http://evil/b.png)" in page, page


@pytest.mark.parametrize("document, output_format",
                         [(d, f) for d, formats in FORMATS.items() for f in formats if f in ("table", "markdown")])
def test_every_document_for_people_is_escaped(monkeypatch, document, output_format):
    # Whatever a renderer writes, render() passes no control character but the newline.
    module = importlib.import_module(f"jvmbridge.render.{document}")
    monkeypatch.setattr(module, f"render_{output_format}", lambda data, *width: f"{EVIL}\nnext line\n")
    shown = [line for line in render(document, output_format, None).splitlines() if not line.startswith("```")]
    assert shown == [*SHOWN_AS_LINES.splitlines(), "next line"]  # Markdown puts them in a fenced block


def _check_document() -> dict:
    verdict = {"mode": "CBC", "status": "active", "reason": EVIL, "fix": ""}
    return {"schema_version": 3, "host": EVIL, "checked_utc": "2026-12-01T00:00:00+00:00", "jvmbridge_version": "0",
            "cpu": {"model": EVIL, "emulation": None, "vm_hides": [],
                    "features": {"aes": {"present": True, "enables": "AES intrinsics"}}},
            "jdks": [], "exit_code": 0,
            "live_jvms": [{"pid": 7, "java_home": EVIL, "version": "17", "command_line": f"java -Dx={EVIL} App",
                           "flags": {"UseAES": {"value": "true", "origin": "default"}}, "verdicts": [verdict]}]}


def test_check_prints_a_hostile_host_and_command_line_escaped():
    text = render("check", "table", _check_document())
    assert "\x1b" not in text and "\u202e" not in text and "\x9b" not in text
    assert text.splitlines()[0] == "AES acceleration is active everywhere checked."
    assert all(not line.startswith("AES") for line in text.splitlines()[1:])


@pytest.mark.parametrize("output_format", ["table", "markdown"])
def test_report_of_a_hostile_fleet_document_is_escaped_and_json_exact(tmp_path, output_format):
    saved = tmp_path / f"{EVIL}.json"  # a host is named by its file (its inventory name), the text there too
    saved.write_text(json.dumps(_check_document()))
    done = run_cli_here("report", str(saved), "--format", output_format)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout and "\x07" not in done.stdout
    shown = MarkdownIt("commonmark").enable("table").render(done.stdout) if output_format == "markdown" else done.stdout
    assert r"app\x1b]0;pwned\x07\x1b[2J" in shown
    exact = json.loads(run_cli_here("report", str(saved), "--format", "json").stdout)
    assert exact["hosts"] == [EVIL]


def test_flags_from_a_hostile_listing_is_escaped(tmp_path):
    listing = tmp_path / "flags.txt"
    listing.write_text("[Global flags]\n"
                       "     bool UseAES                                   = true                       {product} {default}\n"
                       f"    ccstr OnError                                  = {EVIL.splitlines()[0]}     {{product}} {{default}}\n")
    done = run_cli_here("flags", "--from", str(listing), "--all-flags")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and r"\x1b]0;pwned" in done.stdout


def test_an_error_naming_hostile_text_is_one_escaped_line(tmp_path):
    evil_path = tmp_path / "jdk\x1b[2J\nfake"
    evil_path.mkdir()
    done = run_cli("check", "--java", str(evil_path))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "\x1b" not in done.stderr, done.stderr


def test_a_document_with_a_verdict_jvmbridge_does_not_know_is_a_host_not_checked(tmp_path):
    document = _check_document()
    document["live_jvms"][0]["verdicts"][0]["status"] = "totally active \x1b[2J"
    (tmp_path / "odd.json").write_text(json.dumps(document))
    done = run_cli_here("report", str(tmp_path / "odd.json"))
    assert done.returncode == 2 and done.stderr == "", done.stderr
    (row,) = [line for line in done.stdout.splitlines() if "not checked" in line and "odd.json" in line]
    assert "a verdict this jvmbridge does not know" in row and "\x1b" not in done.stdout, row


@pytest.mark.parametrize("broken", ["no verdicts", "no pid", "verdicts not a list", "guard of another shape",
                                    "jdk without version"])
def test_a_document_missing_what_a_check_document_has_is_a_host_not_checked(tmp_path, broken):
    document = _check_document()
    live = document["live_jvms"][0]
    if broken == "no verdicts":
        del live["verdicts"]
    elif broken == "no pid":
        del live["pid"]
    elif broken == "verdicts not a list":
        live["verdicts"] = 7
    elif broken == "guard of another shape":
        live["guard"] = [{"mode": "CTR", "state": "fine"}]
    else:
        document["jdks"] = [{"java_home": "/opt/jdk", "verdicts": []}]
    (tmp_path / "host.json").write_text(json.dumps(document))
    done = run_cli_here("report", str(tmp_path / "host.json"), "--format", "json")
    assert done.returncode == 2 and done.stderr == "", done.stderr
    (why,) = json.loads(done.stdout)["unchecked"].values()
    assert why.startswith(f"{tmp_path / 'host.json'}: not a complete `jvmbridge check` document"), why


@pytest.mark.parametrize("value, written", [
    *((formula, "'" + printable(formula)) for formula in FORMULAS),
    (EVIL, SHOWN), ("-", "-"), ("-12.5", "-12.5"), ("-1e-3", "-1e-3"), ("17.0.15", "17.0.15"), (3, 3), (None, None),
    ("web-1", "web-1"), ("a=b", "a=b"),
])
def test_a_csv_cell_is_never_a_formula_and_never_a_control_sequence(value, written):
    assert csv_cell(value) == written


def _fleet_of_hosts(folder, hosts: list[str]):
    """A saved fleet folder as `jvmbridge fleet` leaves it: one `check` document per host, each with
    one active verdict, in a file named by the host (its inventory name: no "/" in it)."""
    folder.mkdir()
    for host in hosts:
        verdict = {"mode": "CBC", "status": "active", "reason": "", "fix": ""}
        (folder / f"{host}.json").write_text(json.dumps(
            {"host": host, "jdks": [{"java_home": "/jdk", "version": "17", "options": [], "verdicts": [verdict]}],
             "live_jvms": []}))
    return folder


def test_a_fleet_csv_holds_hostile_host_names_as_text(tmp_path):
    hosts = [*(formula.replace("/", "|") for formula in FORMULAS), EVIL, "web-1"]
    done = run_cli_here("report", str(_fleet_of_hosts(tmp_path / "fleet", hosts)), "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert not set(done.stdout) & {"\x1b", "\x07", "\x9b", "\u202e", "\t", "\r"}, done.stdout
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert sorted(row[0] for row in rows[1:]) == sorted(["'" + printable(h) for h in hosts[:-2]] + [SHOWN, "web-1"])


def run_cli_on_a_terminal(*args: str) -> str:
    """What the CLI writes to stdout when stdout is a terminal (a pseudo-terminal here), newlines as
    a pipe has them."""
    leader, follower = os.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "jvmbridge", *args], stdout=follower,
                                   stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        os.close(follower)
        follower = -1
        received = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process closed its end
                break
            if not chunk:
                break
            received += chunk
        process.wait(timeout=60)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    return received.decode().replace("\r\n", "\n")


def test_csv_is_the_same_escaped_text_on_a_terminal_and_through_a_pipe(tmp_path):
    folder = _fleet_of_hosts(tmp_path / "fleet", [EVIL, "web-1"])
    piped = run_cli("report", str(folder), "--format", "csv").stdout
    assert run_cli_on_a_terminal("report", str(folder), "--format", "csv") == piped
    assert "\x1b" not in piped and r"app\x1b]0;pwned\x07\x1b[2J" in piped


def test_markdown_shows_html_from_hosts_as_text(tmp_path):
    hosts = ["<script>alert(1)", "<img src=x onerror=alert(2)>", "a & b"]
    done = run_cli_here("report", str(_fleet_of_hosts(tmp_path / "fleet", hosts)), "--format", "markdown")
    assert done.returncode == 0, done.stderr
    page = MarkdownIt("commonmark").enable("table").render(done.stdout)
    assert "<script" not in page and "<img" not in page, page
    assert "<td>&lt;script&gt;alert(1)</td>" in page and "<td>a &amp; b</td>" in page, page


# What may reach the terminal as it is: jvmbridge's own words (a constant, an UPPER_CASE one), a
# rendered document (each renderer escapes, tested above), the agent jar's path, click's own help.
_AS_IT_IS = {"rendered(output_format)", "guard_jar()", "e.ctx.get_help() if e.ctx else e.format_message()"}


def _unescaped_writes(source: str) -> list[str]:
    """Where ``source`` hands the terminal a text that is neither its own words nor escaped (say,
    printable): click.echo, click.secho, print, or a rich Text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in ("echo", "secho", "print", "Text"):
            continue
        for text in node.args if name == "print" else node.args[:1]:
            escaped = isinstance(text, ast.Call) and getattr(text.func, "id", "") in ("printable", "fitted")
            own = (isinstance(text, ast.Constant) and isinstance(text.value, str)
                   or isinstance(text, ast.Name) and text.id.isupper())
            if not (escaped or own or ast.unparse(text) in _AS_IT_IS):
                found.append(f"{node.lineno}: {name}({ast.unparse(text)[:50]})")
    return found


def test_every_text_a_command_writes_for_people_goes_out_escaped():
    """The class, not its instances: what reaches the terminal is jvmbridge's own words or passed
    through say()/printable(), so a part quoting a worker, a JDK, a host or a saved file cannot drive
    it. A worker's stdout is the pipe its parent reads, not a terminal."""
    unescaped = {str(path.relative_to(REPO)): found for path in sorted((REPO / "jvmbridge").rglob("*.py"))
                 if not path.stem.endswith("_worker") and (found := _unescaped_writes(path.read_text()))}
    assert unescaped == {}
    for slipped in ('click.echo(f"jvmbridge: {why}", err=True)', "message = why\nclick.echo(message)",
                    'print("a", why)', "Text(label)"):
        assert _unescaped_writes(slipped), slipped  # the check sees each


def test_say_escapes_what_it_quotes(capsys):
    say(f"engine openssl-cli left out: {EVIL}")
    say_lines(f"Traceback\n  {EVIL}\n")
    err = capsys.readouterr().err
    assert err == f"jvmbridge: engine openssl-cli left out: {SHOWN}\nTraceback\n  {SHOWN_AS_LINES}\n"
