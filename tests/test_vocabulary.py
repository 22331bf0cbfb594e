"""One vocabulary: the options every document command shares, the time options named one way, and
the Python API's parameters named as `compare`'s options (issue 26, item 9)."""
from __future__ import annotations

import inspect
import json

import click
import pytest

import jvmbridge
from helpers import DATA, run_cli
from jvmbridge.cli import main
from jvmbridge.render import FORMATS

DOCUMENTS = {"compare": "compare", "flags": "flags", "verify": "verify", "check": "check", "jdks": "jdks",
             "report": "runs", "fleet": "fleet"}


def options_of(command: str) -> dict[str, click.Option]:
    return {name: param for param in main.commands[command].params if isinstance(param, click.Option)
            for name in param.opts + param.secondary_opts}


@pytest.mark.fast
@pytest.mark.parametrize("command", DOCUMENTS)
def test_every_command_that_prints_a_document_has_format_output_and_quiet(command):
    options = options_of(command)
    assert {"-q", "--quiet", "-o", "--output", "--format"} <= set(options)
    assert options["-q"] is options["--quiet"] and options["-o"] is options["--output"]
    assert list(options["--format"].type.choices) == list(FORMATS[DOCUMENTS[command]])
    assert FORMATS[DOCUMENTS[command]][:4] == ("table", "markdown", "csv", "json")
    # hyperfine's exports beside the printed document, one per format but the table
    assert {f"--export-{f}" for f in FORMATS[DOCUMENTS[command]][1:]} <= set(options)


@pytest.mark.fast
def test_time_options_are_named_for_what_they_time():
    every = {name for command in main.commands for name in options_of(command)}
    assert {"--round-time", "--mode-time", "--jdk-time"} <= every
    assert not every & {"--budget", "--max-seconds", "--seconds"}
    for command in main.commands:
        for name, option in options_of(command).items():
            if option.metavar == "SECONDS":
                assert name.endswith("-time"), (command, name)


@pytest.mark.fast
def test_the_python_api_takes_compares_options_under_their_names():
    cli = {param.name for param in main.commands["compare"].params if isinstance(param, click.Option)}
    # What only a command needs: the document's format and exports, JMH columns and width of the table, progress.
    cli -= {"output_format", "jmh_columns", "wide", "quiet", "help", *(name for name in cli if name.startswith("export_"))}
    cli = {"java" if name == "java_paths" else name for name in cli}  # --java, shared with other commands
    # ... and what only the API needs: a callback for progress, which the command draws on its terminal.
    api = set(inspect.signature(jvmbridge.compare).parameters) - {"progress"}
    assert api == cli, (api - cli, cli - api)


@pytest.mark.fast
def test_the_api_takes_a_percent_as_the_command_line_and_one_value_or_several():
    from jvmbridge.comparison.request import CompareRequest

    request = CompareRequest(target_error=5, engine=("c-loop",), shape=("stream",), cipher=("aes-128-ctr",))
    assert request.workloads[0].sampling.target_error == pytest.approx(0.05)
    with pytest.raises(ValueError, match="target error must be between 0 and 100%, not 150%"):
        CompareRequest(target_error=150, engine=("c-loop",))


def test_output_saves_the_json_document_beside_the_table_and_quiet_keeps_stderr_empty(tmp_path):
    published = DATA / "published" / "with-and-without-aesni.txt"
    saved = tmp_path / "report.json"
    done = run_cli("report", str(published), "-o", str(saved))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("configuration") and done.stderr == f"jvmbridge: document saved to {saved}\n"
    assert json.loads(saved.read_text()) == json.loads(run_cli("report", str(published), "--format", "json").stdout)
    quiet = run_cli("flags", "--from", str(DATA / "jdk8-printflagsfinal.txt"), "-q", "-o", str(tmp_path / "f.json"))
    assert quiet.returncode == 0 and not quiet.stderr
    assert json.loads((tmp_path / "f.json").read_text())["flags"]
    full = run_cli("jdks", "-q", "-o", "/dev/full")  # /dev/full: every write fails as on a full disk
    assert full.returncode == 1 and "PATH" in full.stdout
    assert full.stderr == "jvmbridge: the document above was not saved: /dev/full: No space left on device\n"
    missing = run_cli("jdks", "-o", str(tmp_path / "no" / "such" / "jdks.json"))
    assert missing.returncode == 2 and "no such folder (make it first)" in missing.stderr


def test_exports_beside_the_table_any_number_of_them(tmp_path):
    paths = {name: tmp_path / name for name in ("a.json", "b.json", "a.csv", "a.md", "a.jmh.json")}
    done = run_cli("compare", "--engine", "c-loop", "--rounds", "2", "--forks", "2", "--max-forks", "2",
                   "--round-time", "0.1", "-q", "--export-json", str(paths["a.json"]), "--export-json",
                   str(paths["b.json"]), "--export-csv", str(paths["a.csv"]), "--export-markdown", str(paths["a.md"]),
                   "--export-jmh", str(paths["a.jmh.json"]))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("jvmbridge ") and not done.stderr  # the table, and -q: nothing on stderr
    first = json.loads(paths["a.json"].read_text())
    assert first == json.loads(paths["b.json"].read_text()) and len(first["results"]) == 2
    assert paths["a.csv"].read_text().count("\n") == 3 and "| 1 |" in paths["a.md"].read_text()
    jmh = json.loads(paths["a.jmh.json"].read_text())
    assert [entry["params"]["setting"] for entry in jmh] == ["AES-NI-on", "AES-NI-off"]
    assert jmh[0]["benchmark"] == "jvmbridge.OpenSSL_C_loop_jvmbridge.message"
    assert jmh[0]["primaryMetric"]["score"] == first["results"][0]["jmh_score"]  # JMH's own figure
    refused = run_cli("jdks", "--export-csv", str(tmp_path / "no" / "such.csv"))
    assert refused.returncode == 2 and "no such folder" in refused.stderr
