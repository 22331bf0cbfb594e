"""How fast the host ran: a fixed yardstick in the same cycles against the fastest this host ever ran
it (no counter in a cloud guest shows a host slowed for hours; absolute figures need it)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from jvmbridge.conductor.conduct import Forked, slices_by_fork
from jvmbridge.saved.store import data_dir
from jvmbridge.stats.summary import summarize
from jvmbridge.trust.bounded import read_regular_file
from jvmbridge.trust.paths import private_folder
from jvmbridge.trust.writer import replace_whole


def reference_path() -> Path:
    return data_dir() / "host-speed.json"


def host_speed(yardstick: list[Forked], what: str, reference: Path | None = None) -> dict | None:
    """The yardstick's figure and interval against the fastest this host ran it, replaced where faster."""
    if not yardstick:
        return None
    summary = summarize(slices_by_fork(yardstick))
    first = yardstick[0].answer
    key = f"{what} | {first.get('openssl_version', '')} | {first.get('cpuinfo', '')}"
    path = reference or reference_path()
    best = _read(path)
    earlier = best.get(key)
    fastest = min(summary.figure_ns, earlier) if earlier else summary.figure_ns
    if fastest != earlier:
        best[key] = fastest
        _write(path, best)
    return {"yardstick": what, "ns_per_op": summary.figure_ns,
            "relative_error": summary.relative_error if math.isfinite(summary.relative_error) else None,
            "reference_ns_per_op": fastest, "speed": fastest / summary.figure_ns, "first_run": earlier is None,
            # A host slower for one fork shows in that fork's own figure.
            "fork_ns_per_op": list(summary.fork_ns)}


def describe(speed: dict) -> str:
    """"the host ran at 0.71 of its best speed during this run (±3%)", for the header."""
    if speed.get("first_run"):
        return "host speed: the first run of its yardstick here, its reference from now on"
    error = speed.get("relative_error")
    return (f"the host ran at {speed['speed']:.2f} of its best speed during this run"
            + (f" ({plus_minus(error)})" if error is not None else ""))


def plus_minus(error: float) -> str:
    """"±3%", or below 1% "±0.2%" (not "±0%")."""
    return f"±{error:.0%}" if error >= 0.01 else f"±{error:.1%}"


# A figure per yardstick, OpenSSL and CPU: a few KiB in a lifetime.
REFERENCE_MAX_BYTES = 1 << 20


def _read(path: Path) -> dict:
    """The reference at ``path`` in the user's own private folder; {} where missing or unsafe."""
    try:
        found = json.loads(read_regular_file(private_folder(path.parent, "the host speed reference") / path.name,
                                             REFERENCE_MAX_BYTES))
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):  # NotAFile and TooLarge too
        return {}


def _write(path: Path, best: dict) -> None:
    """Whole or not at all, in the user's own private folder (root runs it too)."""
    try:
        replace_whole(private_folder(path.parent, "the host speed reference") / path.name, json.dumps(best))
    except (OSError, ValueError):
        pass  # a reference not kept only means the next run starts one
