"""One vocabulary: the options every document command shares, the time options named one way, and
the Python API's parameters named as `compare`'s options.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_vocabulary.py."""
from __future__ import annotations

import inspect

import click
import pytest

import jvmbridge
from jvmbridge.cli import main
from jvmbridge.render import FORMATS

DOCUMENTS = {"compare": ("compare",), "flags": ("flags",), "verify": ("verify",), "check": ("check",),
             "jdks": ("jdks",), "report": ("runs", "fleet"), "fleet": ("fleet",)}  # report: saved runs or a fleet's


def options_of(command: str) -> dict[str, click.Option]:
    return {name: param for param in main.commands[command].params if isinstance(param, click.Option)
            for name in param.opts + param.secondary_opts}


@pytest.mark.parametrize("command", DOCUMENTS)
def test_every_command_that_prints_a_document_has_format_output_and_quiet(command):
    options = options_of(command)
    assert {"-q", "--quiet", "-o", "--output", "--format"} <= set(options)
    assert options["-q"] is options["--quiet"] and options["-o"] is options["--output"]
    formats = list(dict.fromkeys(f for document in DOCUMENTS[command] for f in FORMATS[document]))
    assert list(options["--format"].type.choices) == formats
    assert formats[:4] == ["table", "markdown", "csv", "json"]
    # hyperfine's exports beside the printed document, one per format but the table
    assert {f"--export-{f}" for f in formats[1:]} <= set(options)


def test_time_options_are_named_for_what_they_time():
    every = {name for command in main.commands for name in options_of(command)}
    assert {"--round-time", "--mode-time", "--jdk-time"} <= every
    assert not every & {"--budget", "--max-seconds", "--seconds"}
    for command in main.commands:
        for name, option in options_of(command).items():
            if option.metavar == "SECONDS":
                assert name.endswith("-time"), (command, name)


def test_the_python_api_takes_compares_options_under_their_names():
    cli = {param.name for param in main.commands["compare"].params if isinstance(param, click.Option)}
    # What only a command needs: the document's format and exports, JMH columns, width and notes of the
    # table, progress.
    cli -= {"output_format", "jmh_columns", "wide", "verbose", "quiet", "help", *(name for name in cli if name.startswith("export_"))}
    cli = {"java" if name == "java_paths" else name for name in cli}  # --java, shared with other commands
    # ... and what only the API needs: a callback for progress, which the command draws on its terminal.
    api = set(inspect.signature(jvmbridge.compare).parameters) - {"progress"}
    assert api == cli, (api - cli, cli - api)


def test_the_api_takes_a_percent_as_the_command_line_and_one_value_or_several():
    from jvmbridge.comparison.request import CompareRequest

    request = CompareRequest(target_error=5, engine=("c-loop",), shape=("stream",), cipher=("aes-128-ctr",))
    assert request.workloads[0].sampling.target_error == pytest.approx(0.05)
    with pytest.raises(ValueError, match="target error must be between 0 and 100%, not 150%"):
        CompareRequest(target_error=150, engine=("c-loop",))
