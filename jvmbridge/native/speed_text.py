"""Parse saved `openssl speed` output (OpenSSL 1.0.2 to 3.x): the table form, `-mr`, `-multi`.

The trap this exists for: the table's numbers are 1000s of bytes per second ("1045836.29k"),
while `-mr` lines (+F:...) give plain bytes per second. Only AES rows are kept.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_AES = re.compile(r"^aes-(128|192|256)[- ]([a-z0-9]+)$", re.IGNORECASE)
_TABLE_HEADER = re.compile(r"^type\s+((?:\d+ bytes\s*)+)$")
_TABLE_ROW = re.compile(r"^(?P<name>[A-Za-z][\w\- ]*?)\s+(?P<figures>(?:[\d.]+k\s*)+)$")
_MR_SIZES = re.compile(r"^(?:Got: )?\+H((?::\d+)+)(?: from (\d+))?\s*$")
_MR_FIGURES = re.compile(r"^(?P<child>Got: )?\+F:\d+:(?P<name>[^:]+)(?P<figures>(?::[\d.]+)+)(?: from \d+)?\s*$")
_CHILD = re.compile(r"^(?:Forked child (\d+)|Got: .* from (\d+))\s*$")
_VERSION = re.compile(r"^(?:version: (?P<v3>\S+)|(?P<v1>OpenSSL \d\S*.*?))\s*$")


class SpeedTextError(ValueError):
    """Text that is not `openssl speed` output, or a line that breaks its format."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line  # None: nothing in the text looked like `openssl speed` figures


@dataclass(frozen=True)
class SpeedFigure:
    cipher: str  # normalised to aes-256-cbc
    message_bytes: int
    bytes_per_s: float


@dataclass
class SpeedText:
    figures: list[SpeedFigure] = field(default_factory=list)
    version: str | None = None
    cpuinfo: str | None = None
    processes: int = 1  # `-multi N`: the figures are the sum over N processes


def parse_speed_text(text: str, source: str) -> SpeedText:
    parsed, sizes, children = SpeedText(), None, set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if match := _VERSION.match(line):
            parsed.version = f"OpenSSL {match['v3']}" if match["v3"] else match["v1"]
        elif line.startswith("CPUINFO:"):
            parsed.cpuinfo = line
        elif match := _MR_SIZES.match(line):
            sizes = [int(s) for s in match[1].split(":")[1:]]
        elif match := _TABLE_HEADER.match(line):
            sizes = [int(s) for s in re.findall(r"(\d+) bytes", match[1])]
        elif match := _MR_FIGURES.match(line):
            if not match["child"]:  # "Got: +F..." is one -multi child's share; the sum follows
                _add(parsed, match["name"], [float(v) for v in match["figures"].split(":")[1:]], sizes, source, number)
        elif match := _TABLE_ROW.match(line):
            figures = [float(v) * 1000 for v in re.findall(r"([\d.]+)k", match["figures"])]
            _add(parsed, match["name"], figures, sizes, source, number)
        if match := _CHILD.match(line):
            children.add(match[1] or match[2])
    if not parsed.figures:
        raise SpeedTextError(f"{source}: no AES figures from `openssl speed` found")
    parsed.processes = max(len(children), 1)
    return parsed


def _add(parsed: SpeedText, name: str, figures: list[float], sizes: list[int] | None, source: str, line: int) -> None:
    cipher = _AES.match(name.strip())
    if not cipher:
        return
    if sizes is None:
        raise SpeedTextError(f"{source}:{line}: figures for {name.strip()} before any size header", line)
    if len(figures) != len(sizes):
        raise SpeedTextError(f"{source}:{line}: {len(figures)} figures for {len(sizes)} sizes "
                             f"({', '.join(map(str, sizes))} bytes)", line)
    normalised = f"aes-{cipher[1]}-{cipher[2].lower()}"
    parsed.figures += [SpeedFigure(normalised, size, value) for size, value in zip(sizes, figures)]
