"""`jvmbridge flags`: real JVMs' PrintFlagsFinal, saved text from JDK 8 on, and hostile input.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_flags.py."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import run_cli, run_cli_here
from hypothesis import given, settings
from hypothesis import strategies as st

from jvmbridge.jvm.printflags import FlagsParseError, parse


@pytest.mark.parametrize("words", [["--nmae", "AES"], ["--jvm-args=-XX:-UseAES"], ["-XX:-UseAES"]])
def test_options_flags_does_not_know_are_a_usage_error_and_never_reach_java(words):
    done = run_cli_here("flags", *words)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "the JVM refused" not in done.stderr  # click's own word, before any JVM starts


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400)
       | st.lists(st.sampled_from(["     bool UseAES  = true  {product} {default}", "[Global flags]",
                                   "    ccstr X = {diagnostic}", " bool Y := false {product}", "{", "}",
                                   "= = {a} {b} {c}", "\x00"]), max_size=8).map("\n".join))
def test_parser_fuzz_returns_flags_or_a_clear_error(text):
    try:
        table = parse(text)
    except FlagsParseError as e:
        assert str(e).startswith("input: ")
        return
    assert table.flags
    for flag in table.flags.values():
        assert flag.name and flag.type and flag.kind is not None


def test_a_fifo_or_a_device_given_to_from_is_refused_unread(tmp_path):
    fifo = tmp_path / "flags.txt"
    os.mkfifo(fifo)  # opened for reading as a file, it would wait for a writer for ever
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "a character device")):
        done = run_cli("flags", "--from", str(path), timeout=60)
        assert done.returncode == 2 and done.stderr.splitlines() == [
            f"jvmbridge: error: {path}: not a regular file ({kind})"], done.stderr
