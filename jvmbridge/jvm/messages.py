"""Reading what a JVM printed: why it refused to start or died, and the warnings it gave."""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from jvmbridge.harness import HarnessUnavailable, cache_dir
from jvmbridge.jvm.optionfiles import admitted_arguments
from jvmbridge.trust.paths import NotTrusted, private_folder

# What a JVM prints when it refuses its options (JPype only says "Unable to start JVM") or when it
# dies: the reason, and where its hs_err report went.
_COMPLAINT = re.compile(r"^(Error:|Unrecognized VM option|Improperly specified VM option|.*must be enabled via"
                        r"|Aborting due to|#\s+fatal error:|# /\S*hs_err\S*|Error occurred during initialization of VM)")
# Said before the reason, on a line of its own: "Too small maximum heap" (-Xmx1k).
_INITIALIZATION = "Error occurred during initialization of VM"
# Said after every refusal; worth showing only when nothing more specific was said.
_GENERIC = ("Error: Could not create the Java Virtual Machine.", "Error: A fatal exception has occurred. Program will exit.")
_WARNING = re.compile(r"^\s*(OpenJDK .*VM )?[Ww]arning:")


def complaint(output: str) -> str:
    """The JVM's own explanation on one line, or "" when it gave none."""
    lines = _complaint_lines([line.strip() for line in output.splitlines() if line.strip()])
    lines = [line for line in lines if line not in _GENERIC] or lines
    return " ".join(dict.fromkeys(re.sub(r"^#\s+(/\S*hs_err)", r"report: \1", line) for line in lines))


def _complaint_lines(said: list[str]) -> list[str]:
    """The lines of ``said`` that complain, and each line after _INITIALIZATION (its reason)."""
    return [line for number, line in enumerate(said)
            if _COMPLAINT.match(line) or number and said[number - 1] == _INITIALIZATION]


def warnings(output: str) -> list[str]:
    """Warnings the JVM printed, e.g. "AES intrinsics require UseAES flag to be enabled"."""
    return list(dict.fromkeys(line.strip() for line in output.splitlines() if _WARNING.match(line)))


_REPORT_FILE = re.compile(r"^#\s+(/\S+hs_err\S+\.log)")
_BOILERPLATE = ("# A fatal error", "# JRE version", "# Java VM", "# If you would like", "#   https://",
                "# The crash happened", "# See problematic", "# Core dump", "# An error report",
                "# Problematic frame", "# No core dump")


def crash_reports() -> Path:
    """Where a crashing JVM writes hs_err_pidN.log (and a crashing JIT compiler replay_pidN.log)
    rather than the user's working directory or /tmp: a folder of the user's own cache, 0700, which
    run as root no other user can change (jvmbridge.trust.paths), so none can read root's crash reports
    (environment, command line) or plant links where root writes."""
    try:
        folder = private_folder(cache_dir() / "crashes", "the crash report folder")
    except NotTrusted as e:
        raise HarnessUnavailable(str(e)) from None
    # HotSpot falls back to /tmp/hs_err_pid<pid>.log, through any link planted there, where it cannot write here.
    if not os.access(folder, os.W_OK):
        raise HarnessUnavailable(f"the crash report folder {folder} cannot be written (a read-only file system?): "
                                 "a crashing JVM would write its report in /tmp instead")
    return folder


def crash_file_options() -> list[str]:
    folder = crash_reports()
    return [f"-XX:ErrorFile={folder}/hs_err_pid%p.log", f"-XX:ReplayDataFile={folder}/replay_pid%p.log"]


def java_command(home: Path, *arguments: str, own: Sequence[str] = ()) -> list[str]:
    """``home``'s java with ``own`` (jvmbridge's options, e.g. its agent) then ``arguments``, crash
    reports going to :func:`crash_reports`: how every JVM that jvmbridge starts as a process is
    started. Run as root, UntrustedOption for an option of ``arguments`` not of an allowed form, or
    with --trust-jvm-arg naming a file another user can change (jvm.optionfiles)."""
    return [str(home / "bin" / "java"), *crash_file_options(), *own, *admitted_arguments(arguments)]


def crash_summary(output: str) -> list[str]:
    """HotSpot's fatal-error banner without its boilerplate: the signal and where, e.g.
    "SIGSEGV (0xb) at pc=..., pid=..., tid=..." and the problematic frame. Empty if none."""
    kept = []
    for line in output.splitlines():
        text = line.strip()
        if not text.startswith("#") or text == "#" or text.startswith(_BOILERPLATE) or _REPORT_FILE.match(text):
            continue
        kept.append(text.lstrip("# ").strip())
    return kept[:4]


def crash_report(output: str) -> str | None:
    """The hs_err file the JVM says it wrote, if it says so."""
    return next((m[1] for line in output.splitlines() if (m := _REPORT_FILE.match(line.strip()))), None)
