"""Saved `openssl speed` text as runs of their own, so published figures sit beside measured ones.
Each run's setting comes only from what the text shows (CPUINFO line, OPENSSL_ia32cap/armcap, 1.0.x's
low-level path), else "not stated".
"""
from __future__ import annotations

import datetime
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.engines.native import OpensslSpeedEngine
from jvmbridge.platforms import Platform, known
from jvmbridge.platforms.x86_64 import X86_64
from jvmbridge.results import Measurement
from jvmbridge.saved.schema import row_record
from jvmbridge.saved.speed_text import SpeedFigure, SpeedRun, parse_speed_text
from jvmbridge.stats.summary import summarize
from jvmbridge.version import __version__

NOT_STATED = "not stated"


@dataclass
class PublishedRun:
    metadata: dict
    rows: list[dict]


def speed_text_runs(path: Path, text: str) -> tuple[list[PublishedRun], list[str]]:
    """The runs of one `openssl speed` output file and what was skipped; SpeedTextError if not one."""
    runs = parse_speed_text(text, str(path))
    started = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    with_aes = [run for run in runs if run.figures]
    published = [_published(path, run, number, len(with_aes), started) for number, run in enumerate(with_aes, 1)]
    skipped = Counter(name for run in runs for name in run.skipped)
    problems = []
    if skipped:
        listed = ", ".join(f"{name} ({count}x)" if count > 1 else name for name, count in skipped.items())
        problems.append(f"{path}: {sum(skipped.values())} row(s) of other algorithms skipped, "
                        f"only AES is compared: {listed}")
    return published, problems


def _published(path: Path, run: SpeedRun, number: int, count: int, started: datetime.datetime) -> PublishedRun:
    platform = platform_of(run)
    states = [acceleration(run, platform, figure) for figure in run.figures]
    # Each distinct setting once (a 1.0.x text can hold low-level and EVP rows).
    settings = dict.fromkeys(_setting(platform, *state) for state in states)
    described = "; ".join([*settings, _facts(run)])
    metadata = {"host": f"from {path.name}", "cpu": {"model": NOT_STATED, "features": []},
                "started_utc": started.isoformat(timespec="seconds"), "jvmbridge_version": __version__,
                "source": "openssl speed text", "workload": {},
                "published": f"run {number} of {count} in the text (line {run.line}): {described}"}
    processes = run.processes
    notes = [f"published figure from {path.name}: one number, no interval"]
    if processes and processes > 1:
        notes.append(f"-multi {processes}: the sum over {processes} processes, about {1 / processes:.0%} of it per process")
    rows = [_row(run, platform, figure, state, notes) for figure, state in zip(run.figures, states)]
    return PublishedRun(metadata=metadata, rows=rows)


def _row(run: SpeedRun, platform: Platform, figure: SpeedFigure, state: tuple[bool | None, str],
         notes: list[str]) -> dict:
    accelerated, verified = state
    setting = _setting(platform, accelerated)
    # Whose code ran is part of what was measured.
    if run.engine:
        setting += f", engine {run.engine}"
    if run.options.get("-provider"):
        setting += f", provider {run.options['-provider']}"
    ns_per_op = figure.message_bytes / figure.bytes_per_s * 1e9 if figure.bytes_per_s else float("inf")
    measurement = Measurement(
        engine=OpensslSpeedEngine.label, implementation=run.version or f"OpenSSL (version {NOT_STATED})",
        setting=setting, accelerated=bool(accelerated), as_requested=True, verified_state=verified,
        cipher=figure.cipher, direction="decrypt" if "-decrypt" in run.options else "encrypt", shape="stream",
        message_bytes=figure.message_bytes, threads=run.processes or 1,
        summary=summarize([[{"iterations": 1, "ns": ns_per_op}]]),
        details={"openssl_cpuinfo": run.cpuinfo, "command": run.command}, notes=notes)
    return row_record(measurement.result(expected_ciphertext=""))


def _setting(platform: Platform, accelerated: bool | None, why: str | None = None) -> str:
    """"AES-NI off", or "AES-NI off (why)"."""
    setting = f"{platform.accelerator} {NOT_STATED}" if accelerated is None else platform.setting(accelerated)
    return f"{setting} ({why})" if why else setting


def acceleration(run: SpeedRun, platform: Platform, figure: SpeedFigure) -> tuple[bool | None, str]:
    """Whether the figure's code used AES instructions (None: unsaid), and why."""
    if figure.low_level and (run.version or "").startswith("OpenSSL 1.0."):
        return False, f"{run.version} without -evp: its low-level AES functions have no {platform.accelerator} path"
    if run.cpuinfo:
        try:
            in_use, state = platform.openssl_state(run.cpuinfo)
            return in_use, f"read back from the text's CPUINFO line: {state}"
        except ValueError:
            pass
    value = run.environment.get(platform.openssl_variable or "")
    off = None if value is None else platform.openssl_value_off(value)
    if off is not None:
        how = f"{platform.openssl_variable}={value} given to the command, not read back: the text has no CPUINFO line"
        return (False, how) if off else (None, how + f": it leaves {platform.accelerator} to the CPU")
    return None, f"the text has no CPUINFO line and no {platform.openssl_variable}"


def platform_of(run: SpeedRun) -> Platform:
    """The platform whose OpenSSL variable the run shows; x86-64 where it shows none."""
    for platform in known():
        variable = platform.openssl_variable
        if variable and (variable in (run.cpuinfo or "") or variable in run.environment):
            return platform
    return X86_64()


def _facts(run: SpeedRun) -> str:
    """What the text says of how the run ran, each fact once; "not stated" for the rest."""
    said, unsaid = _command_facts(run)
    if run.processes is None:
        unsaid.append("-multi")
    elif run.processes > 1:
        said.append(f"-multi {run.processes}: figures are the sum over {run.processes} processes")
    clock = _clock(run)
    if clock:
        said.append(clock)
    else:
        unsaid.append("-elapsed")
    seconds = run.options.get("-seconds") or run.planned_seconds
    if seconds:
        said.append(f"{seconds} s per size")
    if "-decrypt" in run.options:
        said.append("-decrypt")
    if not run.table:
        said.append("figures from the \"Doing\" lines (count x size / seconds)")
    return "; ".join(said + ([f"{NOT_STATED}: {', '.join(unsaid)}"] if unsaid else []))


def _command_facts(run: SpeedRun) -> tuple[list[str], list[str]]:
    """The command and implementation-choosing options: what the text says, and what it leaves unsaid."""
    said = [f"`{run.command}`" if run.command else "command not shown"]
    unsaid: list[str] = []
    for option in ("-engine", "-provider", "-async_jobs", "-misalign"):
        if run.options.get(option):
            said.append(f"{option} {run.options[option]}")
        elif option == "-engine" and run.engine_set:
            said.append(f"engine {run.engine_set}, as the output says it was set")
        elif option in ("-engine", "-provider") and not run.command:
            unsaid.append(option)
    return said, unsaid


def _clock(run: SpeedRun) -> str | None:
    """Which time the figures divide by, as the text says; None where unsaid."""
    if "-elapsed" in run.options or run.elapsed_notice:
        return "-elapsed: wall-clock time"
    return "user CPU time (no -elapsed)" if run.command else None
