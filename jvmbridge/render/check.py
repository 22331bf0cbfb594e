"""A `check` document: a summary for people (text, Markdown), verdicts as CSV, JSON, Prometheus."""
from __future__ import annotations

import functools
from typing import Callable

from jvmbridge.fleet.report import fleet_of
from jvmbridge.guard.state import ModeState
from jvmbridge.guard.state import summary as guard_summary
from jvmbridge.intrinsics.verdict import Status
from jvmbridge.jvm.options import main_class
from jvmbridge.render import fleet
from jvmbridge.render.metrics import check_metrics
from jvmbridge.render.text import aligned_block, as_json, as_lines, markdown_block, printable

Table = Callable[..., list[str]]  # rows (header first), indent -> lines: aligned_block or markdown_block

_SUMMARY = {0: "AES acceleration is active everywhere checked.",
            "wrong": "AES acceleration computes WRONG bytes somewhere (see below): do not trust it as configured.",
            1: "AES acceleration is NOT active somewhere (see below).",
            2: "Could not tell everywhere whether AES acceleration is active (see below)."}

_PRESENT = {True: "yes", False: "no", None: "unknown"}


def render_json(document: dict) -> str:
    return as_json(document)


def render_table(document: dict, width: int | None = None) -> str:
    return _render(document, functools.partial(aligned_block, width=width))


def render_markdown(document: dict) -> str:
    return _render(document, markdown_block)


def render_csv(document: dict) -> str:
    return fleet.render_csv(fleet_of([document]))


def render_openmetrics(document: dict) -> str:
    return check_metrics(document)


def _render(document: dict, table: Table) -> str:
    """The answer first (summary, a line per JDK and JVM, duration), then the CPU and each part."""
    lines = [*_answers(document), "", *_cpu_lines(document, table)]
    for jdk in document["jdks"]:
        lines += ["", f"JDK {printable(jdk['java_home'])} ({printable(jdk['version'])})"
                  + (f" with {' '.join(jdk['options'])}" if jdk["options"] else "")]
        lines += _flags_and_verdicts(jdk, table, "  ")
    if document["live_jvms"]:
        lines += ["", "Running JVMs (flags and code cache read over the attach socket)"]
        for live in document["live_jvms"]:
            lines += _live_jvm_lines(live, table)
    if not document["jdks"] and not document["live_jvms"]:
        lines += ["", "Nothing to check: no JDK was given and no running JVM was found."]
    return as_lines(lines)


def _answers(document: dict) -> list[str]:
    """The summary, one line per JDK and running JVM, how long the check took."""
    parts = (*document["jdks"], *document["live_jvms"])
    wrong = any(v["status"] == Status.WRONG for part in parts for v in part["verdicts"])
    lines = [_SUMMARY["wrong" if wrong else document["exit_code"]], *(f"  {_answer(part)}" for part in parts)]
    if "duration_seconds" in document:  # documents before schema 5 did not time the check
        lines.append(f"  (checked in {document['duration_seconds']:.1f} s)")
    return lines


def _cpu_lines(document: dict, table: Table) -> list[str]:
    """The host, its CPU (emulated, or hiding features as a VM's model) and its features."""
    cpu = document["cpu"]
    lines = [f"Host {printable(document['host'])}: {printable(cpu['model'])}"]
    if cpu.get("emulation"):  # documents written before it was recorded do not say
        lines.append(f"EMULATED {cpu['emulation']}: verdicts rest on the JVM's flags and its JIT"
                     + ("; the CPU's features are not known" if all(f["present"] is None
                                                                   for f in cpu["features"].values()) else ""))
    if cpu.get("vm_hides"):
        lines.append(f"VM       its CPU model passes on aes but not {', '.join(cpu['vm_hides'])}: if the host's CPU "
                     "has them, a host-passthrough CPU model gives the JVM (and OpenSSL) the faster stubs")
    lines.append("CPU")
    return lines + table([["feature", "present", "enables"],
                          *([name, _PRESENT[f["present"]], f["enables"]] for name, f in cpu["features"].items())])


def _live_jvm_lines(live: dict, table: Table) -> list[str]:
    lines = [f"  pid {live['pid']}" + (f" {printable(live['java_home'])}: {printable(live['command_line'])[:100]}"
                                       if "java_home" in live else ""),
             *_flags_and_verdicts(live, table, "    ")]
    if "error" not in live:  # documents written before the guard was read have no "guard"
        lines.append(f"    {printable(guard_summary([ModeState(**s) for s in live.get('guard', [])]))}"
                     if live.get("guard") else "    guard: none (no jvmbridge guard agent in this JVM)")
    return lines


def _answer(part: dict) -> str:
    """One line for a JDK or running JVM: modes grouped by verdict, and the fix where there is one."""
    name = (f"pid {part['pid']} {main_class(part.get('arguments', []))}".rstrip() if "pid" in part
            else f"JDK {part['java_home']}" + (f" with {' '.join(part['options'])}" if part.get("options") else ""))
    groups: dict[str, list[str]] = {}
    for verdict in part["verdicts"]:
        groups.setdefault(verdict["status"], []).append(verdict["mode"])
    fixes = list(dict.fromkeys(v["fix"] for v in part["verdicts"] if v.get("fix")))
    said = "; ".join(f"{', '.join(modes)} {status}" for status, modes in groups.items())
    return printable(f"{name}: {said}" + (f" (fix: {fixes[0]})" if len(fixes) == 1 else
                                          " (fixes below)" if fixes else ""))


def _flags_and_verdicts(part: dict, table: Table, indent: str) -> list[str]:
    if "error" in part:
        return [f"{indent}error: {printable(part['error'])}"]
    flags = printable(" ".join(f"{name}={f['value']}" for name, f in part["flags"].items()))
    fixes = dict.fromkeys(v["fix"] for v in part["verdicts"] if v.get("fix"))  # one line per fix, not per mode
    if len(fixes) == 1:  # said on the part's answer line already
        fixes.clear()
    return ([f"{indent}flags: {flags}",
             *table([["mode", "verdict", "reason"], *([v["mode"], v["status"], v["reason"]] for v in part["verdicts"])],
                    indent)]
            + [f"{indent}fix ({', '.join(v['mode'] for v in part['verdicts'] if v.get('fix') == fix)}): {printable(fix)}"
               for fix in fixes])
