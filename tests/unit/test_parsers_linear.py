"""Every parser of text another party wrote takes time linear in its length (tests/worst_inputs.py
lists them, each with its worst input): a JVM answering VM.flags with one line of 300,000 spaces
once kept `check --pid` busy for minutes. benchmarks/parsers.py measures them at 16 MiB."""
from __future__ import annotations

import time

import pytest
from worst_inputs import PARSERS

MIB = 1024 * 1024
# The slowest of them reads a MiB of its worst input in about 0.4 s on a 2-vCPU machine; a
# backtracking one took minutes. The budget leaves 16 times the linear cost, for a busy machine.
BUDGET_SECONDS = 8.0


@pytest.mark.serial
@pytest.mark.parametrize("parser", PARSERS, ids=lambda parser: parser.name)
def test_a_mebibyte_of_the_worst_input_is_read_in_linear_time(parser):
    text = parser.worst(MIB)
    started = time.perf_counter()
    parser.read(text)
    assert time.perf_counter() - started < BUDGET_SECONDS


@pytest.mark.parametrize("parser", PARSERS, ids=lambda parser: parser.name)
def test_each_parser_answers_its_worst_input_without_a_crash(parser):
    """64 KiB, past the 4,300 digits int() reads: a JVM's reply is an answer or a refusal, never a traceback."""
    parser.read(parser.worst(64 * 1024))


def test_a_flag_line_padded_with_spaces_is_still_a_flag():
    """What the parser gives for the worst case is what it gave before: the line is a flag."""
    from jvmbridge.jvm.printflags import parse

    flag = parse("bool UseAES = true" + " " * 100_000 + "{product} {default}\n").flags["UseAES"]
    assert (flag.value, flag.kind, flag.origin) == ("true", "product", "default")


def test_speed_text_reads_the_assignments_just_before_a_command_and_no_others():
    from jvmbridge.saved.speed_text import parse_speed_text

    text = ("X=1 OPENSSL_ia32cap=~0x200000200000000 openssl speed -evp aes-128-cbc\n"
            "type 16 bytes\naes-128-cbc 1000.00k\n")
    run, = parse_speed_text(text, "x")
    assert run.environment == {"X": "1", "OPENSSL_ia32cap": "~0x200000200000000"}
    assert run.command == "X=1 OPENSSL_ia32cap=~0x200000200000000 openssl speed -evp aes-128-cbc"
    run, = parse_speed_text("Y=2 something\nopenssl speed aes-128-cbc\ntype 16 bytes\naes-128-cbc 1000.00k\n", "x")
    assert run.environment == {}


def test_a_number_longer_than_int_reads_is_no_size():
    from jvmbridge.saved.speed_text import SpeedTextError, parse_speed_text

    with pytest.raises(SpeedTextError):
        parse_speed_text("1" * 5000 + "\n" + "type " + "9" * 5000 + " bytes\n", "x")
