"""The answer first: at most six plain lines that say what a compare run found, above its table.
Are the JVM's AES intrinsics active (as read back from the running JVM) and what do they give; how
the JVM does against native OpenSSL, shape by shape; what AES-NI gives OpenSSL; how fast the host
ran. Each from a ratio's figure and the wider side of its interval."""
from __future__ import annotations

from jvmbridge.comparison.hostspeed import describe
from jvmbridge.comparison.ratios import Ratio, RatioKind

MAX_LINES = 6


def headline(ratios: list[Ratio], frame, metadata: dict) -> list[str]:
    """The lines, most asked first; a run of many sizes or JDKs says its first and points at the rest."""
    lines = [_speedup(r, frame) for r in ratios if r.kind is RatioKind.SPEEDUP and "intrinsics" in r.label]
    lines += [_versus(r) for r in ratios if r.kind is RatioKind.VERSUS and "acceleration on" in r.label]
    lines += [_speedup(r, frame) for r in ratios if r.kind is RatioKind.SPEEDUP and "intrinsics" not in r.label]
    speed = metadata.get("host_speed")
    shown = lines[:MAX_LINES - 1 if speed else MAX_LINES]
    if len(shown) < len(lines):
        shown[-1] = f"... and {len(lines) - len(shown) + 1} more ratios below"
    return shown + ([describe(speed)] if speed else [])


def _interval(r: Ratio) -> str:
    if r.value <= 0 or r.high == float("inf"):
        return "no interval"
    return f"±{max(r.high / r.value - 1, 1 - r.low / r.value):.1%}"


def _speedup(r: Ratio, frame) -> str:
    """"JVM AES intrinsics, SunJCE 17 ...: active, 6.03x faster than without (±0.9%)"."""
    what, _, subject = r.label.partition(" speedup, ")
    if what == "intrinsics":
        state = _intrinsics_state(frame, subject)
        return f"JVM AES intrinsics ({subject}): {state}, {r.value:.2f}x faster than without ({_interval(r)})"
    return f"{subject}: {what} makes it {r.value:.2f}x faster ({_interval(r)})"


def _versus(r: Ratio) -> str:
    """"JVM vs OpenSSL C loop, message shape: the JVM takes 1.74x as long (±1.2%)"."""
    label = r.label.replace(", acceleration on", "")
    if r.value >= 1:
        return f"{label}: the JVM takes {r.value:.2f}x as long ({_interval(r)})"
    return f"{label}: the JVM is {1 / r.value:.2f}x faster ({_interval(r)})"


def _intrinsics_state(frame, subject: str) -> str:
    """"active" where the row asked to have them on reads UseAESIntrinsics=true back from its JVM."""
    rows = frame[(frame.engine == "JVM") & frame.accelerated] if not frame.empty else frame
    states = [row.verified_state for row in rows.itertuples() if row.implementation in subject or subject in row.implementation]
    if not states:
        return "state unknown"
    return "active" if all("UseAESIntrinsics=true" in state for state in states) else "NOT active as read back"
