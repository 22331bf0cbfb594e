"""How fast the host ran during a run: a fixed yardstick (comparison.interleaved.YARDSTICK) timed
in the same cycles as everything else, against the fastest this host has ever run it (kept beside
the saved runs). No counter inside a cloud guest shows a host that runs slower for minutes or hours;
the same work, timed beside the rows, does. Ratios do not need it (drift cancels in them); absolute
figures of runs of different hours do, to be read side by side."""
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
    """The run's host speed: the yardstick's figure (ns/op) and its interval over forks, against the
    fastest this host ran it before (``reference``, keyed by what the yardstick is and the OpenSSL
    and CPU it ran on), which this run replaces where it was faster. None without a yardstick."""
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
            # None where the forks give no interval (one fork; forks that settled at distinct levels)
            "relative_error": summary.relative_error if math.isfinite(summary.relative_error) else None,
            "reference_ns_per_op": fastest, "speed": fastest / summary.figure_ns, "first_run": earlier is None,
            # Each fork's own: a host slower for one fork shows in it, as the rows' fork_ns_per_op beside it.
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


# A reference holds a figure per yardstick, OpenSSL and CPU: a few KiB in a lifetime of runs.
REFERENCE_MAX_BYTES = 1 << 20


def _read(path: Path) -> dict:
    """The reference at ``path``, in a folder of the user's own (a private one: root runs it too);
    {} where there is none or it is not one (a FIFO, a folder another user can change, too large)."""
    try:
        found = json.loads(read_regular_file(private_folder(path.parent, "the host speed reference") / path.name,
                                             REFERENCE_MAX_BYTES))
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):  # NotAFile and TooLarge too
        return {}


def _write(path: Path, best: dict) -> None:
    """Whole or not at all (trust.writer.replace_whole), in the user's own folder (a private one: root runs it too)."""
    try:
        replace_whole(private_folder(path.parent, "the host speed reference") / path.name, json.dumps(best))
    except (OSError, ValueError):
        pass  # a reference not kept only means the next run starts one
