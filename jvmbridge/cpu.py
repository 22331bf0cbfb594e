"""The CPU as the operating system reports it, and which of its features matter for AES."""
from __future__ import annotations

import os
import platform
from pathlib import Path

# Feature flag -> what it enables, in the order the report lists them.
AES_FEATURES = {
    "aes": "AES-NI round instructions (AESENC/AESDEC)",
    "pclmulqdq": "carry-less multiply, for GCM's GHASH",
    "avx": "256-bit vector registers",
    "avx2": "256-bit integer vectors",
    "vaes": "vector AES: several blocks per instruction",
    "vpclmulqdq": "vector carry-less multiply, wide GHASH",
    "avx512f": "512-bit vectors (with VAES: 4 blocks per instruction)",
}


def cpu_info(cpuinfo_path: Path = Path("/proc/cpuinfo")) -> dict:
    """Model name and the AES-relevant feature flags; empty flags where /proc/cpuinfo is absent."""
    model, flags = None, set()
    if cpuinfo_path.is_file():
        # Every core repeats the same block; the first one says it all.
        for line in cpuinfo_path.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and model is None:
                model = value.strip()
            elif key == "flags" and not flags:
                flags = set(value.split())
    return {"model": model or platform.processor() or platform.machine(),
            "features": [f for f in AES_FEATURES if f in flags]}


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
