"""The CPU as the operating system reports it, and which of its features matter for AES."""
from __future__ import annotations

import os
import platform
from pathlib import Path

from jvmbridge.platforms import current


def cpu_info(cpuinfo_path: Path = Path("/proc/cpuinfo")) -> dict:
    """Model name and the AES-relevant feature flags; empty flags where /proc/cpuinfo is absent."""
    here = current()
    model, flags = None, set()
    if cpuinfo_path.is_file():
        # Every core repeats the same block; the first one says it all.
        for line in cpuinfo_path.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and model is None:
                model = value.strip()
            elif key == here.features_key and not flags:
                flags = set(value.split())
    return {"model": model or platform.processor() or platform.machine(),
            "features": [f for f in here.aes_features if f in flags]}


def volatile_readings(cpuinfo_path: Path = Path("/proc/cpuinfo")) -> dict:
    """Readings that change from second to second: the first core's MHz and the load average."""
    mhz = None
    if cpuinfo_path.is_file():
        for line in cpuinfo_path.read_text(errors="replace").splitlines():
            if line.startswith("cpu MHz"):
                mhz = float(line.partition(":")[2])
                break
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu_mhz": mhz, "loadavg": list(load) if load else None}
