"""Reading what a JVM printed: why it refused to start or died, and the warnings it gave."""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from jvmbridge.harness import HarnessUnavailable, cache_dir
from jvmbridge.jvm.optionfiles import admitted_arguments
from jvmbridge.trust.paths import NotTrusted, private_folder

# A refusal of options (JPype only says "Unable to start JVM") or a death, and the hs_err path.
_COMPLAINT = re.compile(r"^(Error:|Unrecognized VM option|Improperly specified VM option|.*must be enabled via"
                        r"|Aborting due to|#\s+fatal error:|# /\S*hs_err\S*|Error occurred during initialization of VM)")
# Said on its own line before the reason ("Too small maximum heap").
_INITIALIZATION = "Error occurred during initialization of VM"
# Said after every refusal; shown only when nothing more specific was.
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
    """Where crashing JVMs write hs_err and replay files: a 0700 cache folder no other user can change,
    so none reads root's crash reports or plants links where root writes."""
    try:
        folder = private_folder(cache_dir() / "crashes", "the crash report folder")
    except NotTrusted as e:
        raise HarnessUnavailable(str(e)) from None
    # HotSpot falls back to /tmp/hs_err_pid<pid>.log, through any link planted there.
    if not os.access(folder, os.W_OK):
        raise HarnessUnavailable(f"the crash report folder {folder} cannot be written (a read-only file system?): "
                                 "a crashing JVM would write its report in /tmp instead")
    return folder


def crash_file_options() -> list[str]:
    folder = crash_reports()
    return [f"-XX:ErrorFile={folder}/hs_err_pid%p.log", f"-XX:ReplayDataFile={folder}/replay_pid%p.log"]


def java_command(home: Path, *arguments: str, own: Sequence[str] = ()) -> list[str]:
    """``home``'s java with ``own`` then ``arguments``, crash reports to :func:`crash_reports`: every JVM
    process jvmbridge starts. As root, UntrustedOption for an option not allowed (jvm.optionfiles)."""
    return [str(home / "bin" / "java"), *crash_file_options(), *own, *admitted_arguments(arguments)]


def crash_summary(output: str) -> list[str]:
    """HotSpot's fatal-error banner without boilerplate: the signal, where, the problematic frame."""
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
