"""/proc/cpuinfo read as the kernel writes it, below the platforms that name its fields."""
from __future__ import annotations

from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def cpuinfo_fields(cpuinfo_path: Path = CPUINFO) -> dict[str, str]:
    """The first block of /proc/cpuinfo (every core repeats it) as key -> value; {} where absent."""
    fields: dict[str, str] = {}
    if cpuinfo_path.is_file():
        for line in cpuinfo_path.read_text(errors="replace").splitlines():
            key, separator, value = line.partition(":")
            if separator and key.strip() not in fields:
                fields[key.strip()] = value.strip()
    return fields
