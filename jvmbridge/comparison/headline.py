"""The answer first: at most six plain lines above a compare run's table, each from a ratio's figure
and the wider side of its interval."""
from __future__ import annotations

from jvmbridge.comparison.hostspeed import describe
from jvmbridge.comparison.ratios import Ratio, RatioKind
from jvmbridge.engines import name_of

MAX_LINES = 6
SHAPE_WORDS = {"message": "messages", "stream": "stream"}


def headline(ratios: list[Ratio], frame, metadata: dict) -> list[str]:
    """The lines, most asked first; a run of many sizes or JDKs says its first and points at the rest."""
    speed = metadata.get("host_speed")
    said = answered(ratios, metadata)
    lines = _stopped_short(metadata)
    lines += [_line(r, frame) for r in said]
    if said and len(said) < len(ratios):
        lines.append(f"... {len(ratios) - len(said)} more ratios under the table")
    return lines + ([describe(speed)] if speed else [])


def answered(ratios: list[Ratio], metadata: dict) -> list[Ratio]:
    """The ratios the headline states in its order, as many as fit beside its other lines."""
    room = MAX_LINES - bool(metadata.get("host_speed")) - len(_stopped_short(metadata))
    asked = [r for place in range(3) for r in ratios if _headline_place(r) == place]
    return asked if len(asked) == len(ratios) and len(asked) <= room else asked[:room - 1]


def _stopped_short(metadata: dict) -> list[str]:
    """Why the forks stopped short, where they did: a fault of jvmbridge's own, or a limit with a ratio
    still wide."""
    if fault := metadata.get("fault"):
        return [fault[0].upper() + fault[1:]]
    return [f"Stopped at {limit}"] if (limit := metadata.get("forks_limit")) else []


def _headline_place(r: Ratio) -> int | None:
    """Which of answered's three kinds a ratio is (0, 1, 2, in the headline's order); None: not one."""
    if r.kind is RatioKind.SPEEDUP:
        return 0 if r.accelerator == "intrinsics" else 2 if r.accelerator else None
    return 1 if r.kind is RatioKind.VERSUS and r.accelerator == "on" else None


def _line(r: Ratio, frame) -> str:
    if r.kind is RatioKind.VERSUS:
        return _versus(r)
    return _intrinsics(r, frame) if r.accelerator == "intrinsics" else _native(r)


def _interval(r: Ratio) -> str:
    if r.value <= 0 or r.high == float("inf"):
        return "no interval"
    return f"±{max(r.high / r.value - 1, 1 - r.low / r.value):.1%}"


def _intrinsics(r: Ratio, frame) -> str:
    """"JVM SunJCE, JDK 17.0.15, messages: AES intrinsics active, 6.03x speedup (±0.9%)"."""
    said = f"{r.of}, {_which(r)}: AES intrinsics {_state(frame, r.of)}"
    return f"{said}, speedup {r.said_levels()}" if r.levels else f"{said}, {r.value:.2f}x speedup ({_interval(r)})"


def _versus(r: Ratio) -> str:
    """"JVM SunJCE, JDK 17.0.15 vs OpenSSL C loop, messages: 1.74x faster (±1.2%)"."""
    said = f"{r.of} vs {r.against}, {_which(r)}"
    if r.levels:
        return f"{said}: {r.said_levels()}"
    if not r.significant:
        return f"{said}: as fast ({r.value:.2f}x, {_interval(r)})"  # 1 is within the interval
    if r.value >= 1:
        return f"{said}: {_times(r.value)} faster ({_interval(r)})"
    return f"{said}: {_times(1 / r.value)} slower ({_interval(r)})"


def _times(value: float) -> str:
    """"1.17x"; a third decimal where two would read 1.00x."""
    return f"{value:.3f}x" if f"{value:.2f}" == "1.00" else f"{value:.2f}x"


def _native(r: Ratio) -> str:
    if r.levels:
        return f"{r.of}, {_which(r)}: {r.accelerator} makes it faster by {r.said_levels()}"
    return f"{r.of}, {_which(r)}: {r.accelerator} makes it {r.value:.2f}x faster ({_interval(r)})"


def _which(r: Ratio) -> str:
    """Its shape, and its cipher, direction or size where the run has several: "stream, 16 B"."""
    return ", ".join(filter(None, (SHAPE_WORDS.get(r.shape, r.shape), r.operation)))


def _state(frame, name: str) -> str:
    """"active" where every row of the JVM ``name`` asking for them reads UseAESIntrinsics=true back."""
    states = [row.verified_state for row in frame.itertuples() if row.accelerated and name_of(row) == name]
    if not states:
        return "state unknown"
    return "active" if all("UseAESIntrinsics=true" in state for state in states) else "NOT active as read back"
