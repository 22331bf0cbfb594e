"""Text from hosts and processes reaches the terminal escaped: a host name, a command line, a flag
listing or a fleet document carrying terminal escape sequences is printed as what it says.
JSON keeps it exact (and escapes it itself)."""
from __future__ import annotations

import importlib
import json

import pytest

from conftest import run_cli
from jvmbridge.render import FORMATS, render
from jvmbridge.render.text import align, markdown, printable

# Set the window title, clear the screen, a C1 CSI, a newline that would fake a line, a
# right-to-left override that would reorder what follows.
EVIL = "app\x1b]0;pwned\x07\x1b[2J\x9b31m\nAES acceleration is active everywhere checked.\u202egnp"
SHOWN_AS_LINES = r"app\x1b]0;pwned\x07\x1b[2J\x9b31m" + "\n" + r"AES acceleration is active everywhere checked.\u202egnp"
SHOWN = r"app\x1b]0;pwned\x07\x1b[2J\x9b31m\nAES acceleration is active everywhere checked.\u202egnp"


@pytest.mark.fast
def test_printable_escapes_controls_and_reordering_marks_and_keeps_the_rest():
    assert printable(EVIL) == SHOWN
    assert printable("tab\there\r") == r"tab\there\r"
    assert printable("a\nb", lines=True) == "a\nb"
    assert printable("café ✓ 17.0.15+6-Debian") == "café ✓ 17.0.15+6-Debian"


@pytest.mark.fast
def test_cells_escape_newlines_too():
    assert align([["host"], [EVIL]])[1] == SHOWN
    assert markdown([["host"], [EVIL]])[2] == f"| {SHOWN} |"


@pytest.mark.fast
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


@pytest.mark.fast
def test_check_prints_a_hostile_host_and_command_line_escaped():
    text = render("check", "table", _check_document())
    assert "\x1b" not in text and "\u202e" not in text and "\x9b" not in text
    assert text.splitlines()[-1] == "AES acceleration is active everywhere checked."
    assert all(not line.startswith("AES") for line in text.splitlines()[:-1])


@pytest.mark.fast
@pytest.mark.parametrize("output_format", ["table", "markdown"])
def test_report_of_a_hostile_fleet_document_is_escaped_and_json_exact(tmp_path, output_format):
    (tmp_path / "evil.json").write_text(json.dumps(_check_document()))
    done = run_cli("report", str(tmp_path / "evil.json"), "--format", output_format)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout and "\x07" not in done.stdout
    assert r"app\x1b]0;pwned\x07\x1b[2J" in done.stdout
    exact = json.loads(run_cli("report", str(tmp_path / "evil.json"), "--format", "json").stdout)
    assert exact["hosts"] == [EVIL]


@pytest.mark.fast
def test_flags_from_a_hostile_listing_is_escaped(tmp_path):
    listing = tmp_path / "flags.txt"
    listing.write_text("[Global flags]\n"
                       "     bool UseAES                                   = true                       {product} {default}\n"
                       f"    ccstr OnError                                  = {EVIL.splitlines()[0]}     {{product}} {{default}}\n")
    done = run_cli("flags", "--from", str(listing), "--all-flags")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and r"\x1b]0;pwned" in done.stdout


@pytest.mark.fast
def test_an_error_naming_hostile_text_is_one_escaped_line(tmp_path):
    evil_path = tmp_path / "jdk\x1b[2J\nfake"
    evil_path.mkdir()
    done = run_cli("check", "--java", str(evil_path))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "\x1b" not in done.stderr, done.stderr


@pytest.mark.fast
def test_a_document_with_a_verdict_jvmbridge_does_not_know_is_a_host_not_checked(tmp_path):
    document = _check_document()
    document["live_jvms"][0]["verdicts"][0]["status"] = "totally active \x1b[2J"
    (tmp_path / "odd.json").write_text(json.dumps(document))
    done = run_cli("report", str(tmp_path / "odd.json"))
    assert done.returncode == 2 and done.stderr == "", done.stderr
    (row,) = [line for line in done.stdout.splitlines() if "not checked" in line and "odd.json" in line]
    assert "a verdict this jvmbridge does not know" in row and "\x1b" not in done.stdout, row


@pytest.mark.fast
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
    done = run_cli("report", str(tmp_path / "host.json"), "--format", "json")
    assert done.returncode == 2 and done.stderr == "", done.stderr
    (why,) = json.loads(done.stdout)["unchecked"].values()
    assert why.startswith(f"{tmp_path / 'host.json'}: not a complete `jvmbridge check` document"), why
