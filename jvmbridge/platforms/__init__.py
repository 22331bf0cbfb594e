"""CPU architectures: the AES features on each, how OpenSSL's use is switched off and read back, and
their names. Code elsewhere asks :func:`current`; a new platform is a :class:`Platform` subclass."""
from __future__ import annotations

import platform as _host

from jvmbridge.platforms.aarch64 import AArch64
from jvmbridge.platforms.base import QEMU_USER, Platform
from jvmbridge.platforms.x86_64 import X86_64

__all__ = ["QEMU_USER", "Platform", "current", "known"]


def known() -> list[Platform]:
    """Every platform jvmbridge knows."""
    return [X86_64(), AArch64()]


def current() -> Platform:
    """This machine's platform; an unknown one gets the base class: no switch, no names."""
    machine = _host.machine().lower()
    for platform in known():
        if machine in platform.machines:
            return platform
    unknown = Platform()
    unknown.name = machine or "unknown"
    return unknown
