"""Saved `openssl speed` text as a run of its own, so published figures sit beside measured ones."""
from __future__ import annotations

import datetime
from pathlib import Path

from jvmbridge import __version__
from jvmbridge.native.speed_text import parse_speed_text
from jvmbridge.platforms.x86_64 import X86_64
from jvmbridge.engines.native import OpensslSpeedEngine
from jvmbridge.results import Measurement
from jvmbridge.schema import row_record
from jvmbridge.stats import summarize


def speed_text_run(path: Path, text: str) -> tuple[dict, list[dict]]:
    """(run metadata, result rows) for one file of `openssl speed` output; SpeedTextError if it is not."""
    parsed = parse_speed_text(text, str(path))
    started = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)
    metadata = {"host": f"from {path.name}", "cpu": {"model": "not stated", "features": []},
                "started_utc": started.isoformat(timespec="seconds"), "jvmbridge_version": __version__,
                "source": "openssl speed text", "workload": {}}
    # Published texts read today carry x86's OPENSSL_ia32cap (aarch64 ones print OPENSSL_armcap).
    x86 = X86_64()
    setting, verified = f"{x86.accelerator} not stated", "the text has no CPUINFO line"
    if parsed.cpuinfo:
        in_use, verified = x86.openssl_state(parsed.cpuinfo)
        setting = x86.setting(in_use)
    notes = [f"published figure from {path.name}: one number, no interval"]
    if parsed.processes > 1:
        notes.append(f"-multi {parsed.processes}: the sum over {parsed.processes} processes, "
                     f"about {1 / parsed.processes:.0%} of it per process")
    rows = []
    for figure in parsed.figures:
        ns_per_op = figure.message_bytes / figure.bytes_per_s * 1e9 if figure.bytes_per_s else float("inf")
        measurement = Measurement(
            engine=OpensslSpeedEngine.label, implementation=f"{parsed.version or 'OpenSSL (version not stated)'}",
            setting=setting, accelerated=setting == x86.setting(True), as_requested=True, verified_state=verified,
            cipher=figure.cipher, direction="encrypt", shape="stream", message_bytes=figure.message_bytes, threads=parsed.processes,
            summary=summarize([{"iterations": 1, "ns": ns_per_op}]),
            details={"openssl_cpuinfo": parsed.cpuinfo},
            notes=notes)
        rows.append(row_record(measurement.result(expected_ciphertext="")))
    return metadata, rows
