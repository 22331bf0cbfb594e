"""The CPU as the operating system reports it, and which of its features matter for AES."""
from __future__ import annotations

import os
import platform
from pathlib import Path

from jvmbridge.platforms import Platform, current
from jvmbridge.platforms.cpuinfo import CPUINFO, cpuinfo_fields


def cpu_info(cpuinfo_path: Path = CPUINFO, here: Platform | None = None) -> dict:
    """Model and AES features as ``here`` names them; features None where /proc/cpuinfo has no line
    for this platform (qemu-user shows the x86 host's text): absence is then no fact."""
    here = here or current()
    fields = cpuinfo_fields(cpuinfo_path)
    listed = fields.get(here.features_key)
    return {"model": here.model(fields) or platform.processor() or platform.machine(),
            "features": None if listed is None else [f for f in here.aes_features if f in listed.split()],
            "emulation": here.emulation(fields), "vm_hides": here.vm_hides(fields)}


def lacks(features: list[str] | None, feature: str) -> bool:
    """Whether the CPU is known not to have ``feature`` (unknown features lack nothing)."""
    return features is not None and feature not in features


def features_text(features: list[str] | str | None) -> str:
    """The features as reports show them; a saved run's column holds them joined already."""
    if features is None:
        return "features unknown"
    return (features if isinstance(features, str) else " ".join(features)) or "no AES-related flags"


def volatile_readings(cpuinfo_path: Path = CPUINFO) -> dict:
    """Readings that change from second to second: the first core's MHz and the load average."""
    mhz = cpuinfo_fields(cpuinfo_path).get("cpu MHz")
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu_mhz": float(mhz) if mhz else None, "loadavg": list(load) if load else None}
