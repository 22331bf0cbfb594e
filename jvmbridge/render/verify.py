"""A `verify` document: a line per JDK and mode then what was wrong (text, Markdown), CSV, JSON."""
from __future__ import annotations

import functools
from typing import Callable

from jvmbridge.host.cpu import features_text
from jvmbridge.render.text import aligned_block, as_json, as_lines, csv_text, markdown_block
from jvmbridge.verify.sweep import PATTERN_MEANING

_SUMMARY = {0: "Every mode checked computed the same bytes as OpenSSL.",
            1: "Some JVM computed WRONG bytes or crashed (see above): do not trust it as configured.",
            2: "Could not verify everything (see above)."}


def render_json(document: dict) -> str:
    return as_json(document)


def render_table(document: dict, width: int | None = None) -> str:
    return _render(document, functools.partial(aligned_block, width=width))


def render_markdown(document: dict) -> str:
    return _render(document, markdown_block)


_CSV_HEADER = ["java_home", "version", "options", "provider_class", "mode", "verdict", "passes", "after_jit",
               "mode_intrinsics_compiled", "seen_after_s", "seconds", "error", "smallest_failing_cases"]


def render_csv(document: dict) -> str:
    """A row per JDK and mode; the smallest failing case of each call pattern in one cell."""
    rows = [_CSV_HEADER]
    for jdk in document["jdks"]:
        for mode in jdk["modes"]:
            failing = "; ".join(f"{f['pattern']} AES-{f['key_bits']} {f['direction']} {f['size']} B: {f['what']}"
                                for f in mode["findings"])
            rows.append([jdk["java_home"], jdk["version"], " ".join(jdk["options"]), jdk["provider_class"] or "",
                         mode["mode"], mode["status"], mode["passes"], mode["compiled_passes"],
                         " ".join(mode["mode_intrinsics_seen"]), _or_blank(mode["proven_after_seconds"]),
                         mode["seconds"], mode["error"] or "", failing])
    return csv_text(rows)


def _or_blank(value) -> str:
    return "" if value is None else str(value)


def _render(document: dict, table: Callable[[list[list[str]]], list[str]]) -> str:
    lines = _header(document)
    patterns_used: set[str] = set()
    for jdk in document["jdks"]:
        lines += ["", f"JDK {jdk['java_home']} ({jdk['version']})"
                  + (f" with {' '.join(jdk['options'])}" if jdk["options"] else "")
                  + (f", provider {jdk['provider_class']}" if jdk["provider_class"] else "")]
        lines += table(_modes_rows(jdk)) + _could_not_run(jdk)
        for mode in jdk["modes"]:
            lines += _problems(mode, patterns_used)
    if patterns_used:
        lines += ["", "Call patterns:"] + [f"  {name:8} {PATTERN_MEANING[name]}" for name in PATTERN_MEANING
                                           if name in patterns_used]
    lines += ["", _SUMMARY[document["exit_code"]]]
    return as_lines(lines)


def _header(document: dict) -> list[str]:
    """What was checked against what: the sweep's cases and passes, the CPU."""
    sweep, cpu = document["sweep"], document["cpu"]
    return [f"jvmbridge {document['jvmbridge_version']} verify: the JVM's AES against {sweep['reference']}, "
            "same keys, IVs and bytes",
            f"Cases    {sweep['sizes']} sizes ({sweep['smallest']}..{sweep['largest']} B) x AES-"
            + "/".join(map(str, sweep["key_bits"])) + " x " + "/".join(sweep["directions"])
            + f", {len(sweep['patterns'])} call patterns each ({', '.join(sweep['patterns'])}); "
            f"GCM with AAD, and a tampered tag must be refused",
            f"Passes   until {sweep['compiled_passes']} passes began after the JIT log showed the mode's "
            f"intrinsics, or {sweep['budget_seconds']:g} s per JDK",
            f"CPU      {cpu['model']} [{features_text(cpu['features'])}]"]


def _modes_rows(jdk: dict) -> list[list[str]]:
    rows = [["mode", "verdict", "passes", "after JIT", "mode intrinsics compiled", "seen after", "time"]]
    for mode in jdk["modes"]:
        seen = mode["proven_after_seconds"]
        rows.append([mode["mode"], mode["status"], str(mode["passes"]), str(mode["compiled_passes"]),
                     ", ".join(mode["mode_intrinsics_seen"]) or "none",
                     f"{seen:.1f} s" if seen is not None else "never", f"{mode['seconds']:.1f} s"])
    return rows


def _could_not_run(jdk: dict) -> list[str]:
    """The modes' errors: once where every mode failed with the same one, else per mode."""
    errors = dict.fromkeys(mode["error"] for mode in jdk["modes"])
    if len(jdk["modes"]) > 1 and len(errors) == 1 and None not in errors:  # e.g. the JVM would not start
        return [f"  could not run: {next(iter(errors))}"]
    return [f"  {mode['mode']}: could not run: {mode['error']}" for mode in jdk["modes"] if mode["error"]]


def _problems(mode: dict, patterns_used: set) -> list[str]:
    lines = _intrinsic_unchecked(mode)
    if not mode["findings"]:
        return lines
    causes = dict.fromkeys(f["attribution"] for f in mode["findings"])
    lines.append(f"  {mode['mode']} {mode['status']}, smallest failing case per call pattern:")
    for finding in mode["findings"]:
        patterns_used.add(finding["pattern"])
        lines += _finding_lines(finding, mode["groups"], with_cause=len(causes) > 1)
    if len(causes) == 1:
        lines.append(f"  Cause: {next(iter(causes))}")
    return lines + _bugs_and_workaround(mode["findings"])


def _intrinsic_unchecked(mode: dict) -> list[str]:
    """Where bytes were checked but perhaps not on the intrinsic path (off, or not compiled in time)."""
    if mode["intrinsic_off"]:
        return [f"  {mode['mode']}: intrinsic off ({mode['intrinsic_off']}): the Java code was checked"]
    if mode["compiled_passes"] == 0 and mode["passes"]:
        when = ("was never logged as compiled" if mode["proven_after_seconds"] is None
                else "was logged as compiled only after the last pass began (a longer --jdk-time helps)")
        return [f"  {mode['mode']}: {mode['intrinsics_expected']} {when}: the bytes were checked, "
                "the intrinsic path perhaps not"]
    return []


def _finding_lines(finding: dict, groups: int, with_cause: bool) -> list[str]:
    lines = [f"    {finding['pattern']:8} AES-{finding['key_bits']} {finding['direction']} of "
             f"{finding['size']} bytes: {finding['what']} ({finding['groups']} of "
             f"{groups} key/direction groups)"]
    if finding["crash"]:
        crash = finding["crash"]
        lines += [f"             {text}" for text in crash["lines"]]
        if crash["report"]:
            lines.append(f"             crash report: {crash['report']}")
    if with_cause:
        lines.append(f"             cause: {finding['attribution']}")
    return lines


def _bugs_and_workaround(findings: list[dict]) -> list[str]:
    bugs = dict.fromkeys(f["known_bug_description"] for f in findings if f["known_bug_description"])
    lines = [f"  Known bug: {bug}" for bug in bugs]
    if any(f["culprit_flag"] for f in findings) and not bugs:
        lines.append("  Known bug: none on record here matches")
    workarounds = dict.fromkeys(f["workaround"] for f in findings if f["workaround"])
    if len(workarounds) == 1:
        lines.append(f"  Workaround: {next(iter(workarounds))}")
    return lines
