"""Every parser of text another party wrote (a JVM's replies and output, a host's or a user's file,
a program's output), each with the input that costs it most: the suite feeds each a small one
(tests/unit/test_parsers_linear.py), benchmarks/parsers.py a large one, and each must take time
linear in its length. A new parser of such text gets its line here.

Each worst case is what a backtracking pattern would choke on: long runs of what one part of it
matches and the next must give back (spaces before a value that never ends in a bracket, a run of
NAME=value words never followed by a command, a line start repeated without its end).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jvmbridge.guard import state as guard_state
from jvmbridge.intrinsics import codecache, jitlog
from jvmbridge.jvm import live, messages, options, printflags
from jvmbridge.native import openssl_cli
from jvmbridge.platforms import aarch64, x86_64
from jvmbridge.saved.speed_text import SpeedTextError, parse_speed_text


@dataclass(frozen=True)
class Parser:
    name: str  # what reads the text, and whose text it is
    read: Callable[[str], object]
    unit: str  # the worst input is this, repeated
    before: str = ""  # and this before it
    after: str = ""  # and this after it

    def worst(self, size: int) -> str:
        """The worst input of at most ``size`` characters (the most a caller reads: 16 MiB of VM.flags)."""
        return self.before + self.unit * max(1, (size - len(self.before) - len(self.after)) // len(self.unit)) + self.after


def _quietly(read: Callable[[str], object], *refusals: type[Exception]) -> Callable[[str], object]:
    """``read``, whose refusal of a text (what it does with most worst cases) is an answer too."""
    def reading(text: str) -> object:
        try:
            return read(text)
        except refusals as e:
            return e
    return reading


def _each_line(read: Callable[[str], object]) -> Callable[[str], object]:
    """A parser of one line at a time, given every line of the text, as its callers do."""
    return lambda text: [read(line) for line in text.splitlines()]


def _sorted_labels(label: str) -> list:
    """``label`` sorted by report among a version and a word, as a column's labels are."""
    import pandas as pd

    from jvmbridge.report import history

    return sorted(history._natural(pd.Series(["JDK 17", "JDK abc", label])))


PARSERS = [
    # `jcmd PID VM.flags -all` over the attach socket, PrintFlagsFinal, `flags --from FILE`.
    Parser("printflags (a flag line of spaces)", _quietly(printflags.parse, printflags.FlagsParseError), " ",
           before="bool UseAES = true", after="x"),
    Parser("printflags (lines of brackets)", _quietly(printflags.parse, printflags.FlagsParseError),
           "bool A = {x} {y} {z}\n"),
    # What a JVM that would not start, or died, printed.
    Parser("JVM complaint", messages.complaint, " ", before="Error:", after="must be enabled vi"),
    Parser("JVM warnings", messages.warnings, "OpenJDK ", after="VM"),
    Parser("JVM crash banner", messages.crash_summary, "# /", after="hs_err"),
    Parser("JVM crash report's path", messages.crash_report, " ", before="#", after="/hs_err"),
    # The JIT's inlining log of a watched JVM.
    Parser("JIT inlining log", _each_line(jitlog.intrinsic_method), " ", before="com.sun.crypto.provider.A::b",
           after="(104 bytes) (intrinsi"),
    Parser("JIT inlining tree", _each_line(jitlog.is_inlining_log), " ", after="@ 1"),
    # A running JVM's code cache (Compiler.codelist) and its system properties (VM.system_properties).
    Parser("code cache", codecache.parse_codelist, "0 4 0 com.sun.crypto.provider.A.b" + " " * 60 + "\n"),
    Parser("code cache (a level of many digits)", codecache.parse_codelist, "4", before="1 ",
           after=" 0 com.sun.crypto.provider.A.b\n"),
    Parser("system properties", _each_line(live._unescaped), "\\"),
    # VM.version's JDK line: a digit int() refuses, or more digits than it reads.
    Parser("JDK version (many digits)", options.java_major, "9"),
    Parser("JDK version (a superscript digit)", options.java_major, "\u00b2", before="1."),
    # report's column labels, sorted by the numbers in them: a host's run file names its JDK's version.
    Parser("report's column labels (many digits)", lambda text: _sorted_labels("JDK " + text), "9"),
    Parser("report's column labels (a superscript digit)", lambda text: _sorted_labels("JDK " + text), "\u00b2"),
    # The SSE and AVX levels in a running JVM's VM.flags, read as numbers.
    Parser("UseSSE/UseAVX values (many digits)",
           lambda text: x86_64.X86_64().held_off(printflags.parse(text).flags), "9", before="intx UseSSE = ",
           after=" {product} {default}\n"),
    Parser("UseSSE/UseAVX values (a superscript digit)",
           lambda text: x86_64.X86_64().held_off(printflags.parse(text).flags), "intx UseSSE = \u00b2 {product}\n"),
    # `openssl speed -mr`'s lines and `openssl version -c`'s CPUINFO.
    Parser("openssl speed -mr lines", lambda text: list(openssl_cli._LINE.finditer(text)), "+DT:aes\n"),
    Parser("OPENSSL_ia32cap", _quietly(x86_64.capability_words, ValueError), "OPENSSL_ia32cap=0x1:"),
    Parser("OPENSSL_armcap", _quietly(aarch64.armcap, ValueError), "OPENSSL_armcap="),
    # The guard agent's system property.
    Parser("guard state", lambda text: guard_state.summary(guard_state.parse(text)), "CBC WRONG 2026-12-01T10:02"),
    # Published `openssl speed` text (`report FILE`).
    Parser("openssl speed text (NAME=value words)", _quietly(lambda t: parse_speed_text(t, "x"), SpeedTextError),
           "OPENSSL_ia32cap=1 "),
    Parser("openssl speed text (a long word)", _quietly(lambda t: parse_speed_text(t, "x"), SpeedTextError), "a",
           before="openssl speed "),
    Parser("openssl speed text (an open quote)", _quietly(lambda t: parse_speed_text(t, "x"), SpeedTextError),
           "aes-128-cbc ", before='X="'),
    Parser("openssl speed text (long numbers)", _quietly(lambda t: parse_speed_text(t, "x"), SpeedTextError),
           "1", before="type ", after=" bytes"),
]
