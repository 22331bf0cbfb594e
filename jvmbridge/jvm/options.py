"""Which HotSpot options a configuration passes, and which flags to read back from the JVM."""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.trust.paths import NotTrusted, trusted_path
from jvmbridge.wholenumber import whole_number

UNLOCK_DIAGNOSTIC = "-XX:+UnlockDiagnosticVMOptions"
# Read back every run: together they say what the AES path is. -XX:-UseAES leaves GHASH on.
AES_FLAGS = ("UseAES", "UseAESIntrinsics", "UseAESCTRIntrinsics", "UseGHASHIntrinsics")

_BOOLEAN = re.compile(r"^-XX:([+-])(\w+)$")
_VALUED = re.compile(r"^-XX:(\w+)=(.*)$")


@dataclass(frozen=True)
class JvmSetting:
    """A named set of JVM options, e.g. intrinsics "on" (defaults) or "off"."""
    name: str
    options: tuple[str, ...]
    accelerated: bool  # whether AES is expected to run on the CPU's AES instructions
    # The flag values that make it this setting, as read back.
    defined_by: tuple[tuple[str, str], ...] = ()


_AES_FLAGS = ("UseAES", "UseAESIntrinsics")
INTRINSICS_ON = JvmSetting(name="intrinsics on", options=(), accelerated=True,
                           defined_by=tuple((name, "true") for name in _AES_FLAGS))
INTRINSICS_OFF = JvmSetting(name="intrinsics off", options=("-XX:-UseAES", "-XX:-UseAESIntrinsics"), accelerated=False,
                            defined_by=tuple((name, "false") for name in _AES_FLAGS))


def setting_as_run(setting: JvmSetting, flags: dict[str, dict]) -> JvmSetting:
    """The setting the read-back flags show it ran with: ``setting`` unless the user's options
    contradict it (-XX:-UseAES with intrinsics on)."""
    values = {name: flag.get("value") for name, flag in flags.items()}
    if all(values.get(name) == value for name, value in setting.defined_by):
        return setting
    for other in (INTRINSICS_ON, INTRINSICS_OFF):
        if other.defined_by and all(values.get(name) == value for name, value in other.defined_by):
            return other
    # Neither: the intrinsic needs UseAES and UseAESIntrinsics both.
    return INTRINSICS_OFF if setting is INTRINSICS_ON else setting


def requested_flags(options: tuple[str, ...] | list[str]) -> dict[str, str]:
    """Flag name -> value as HotSpot would print it ("true"/"false"/text) for each -XX option."""
    requested = {}
    for option in options:
        if match := _BOOLEAN.match(option):
            requested[match[2]] = "true" if match[1] == "+" else "false"
        elif match := _VALUED.match(option):
            requested[match[1]] = match[2]
    requested.pop(UNLOCK_DIAGNOSTIC[5:], None)
    return requested


def launch_options(options: tuple[str, ...] | list[str], java_major: int) -> list[str]:
    """The options to start the JVM with, the diagnostic unlock first: JDK 9+ refuses diagnostic
    flags (UseAESIntrinsics) before it."""
    launch = [UNLOCK_DIAGNOSTIC]
    if java_major >= 22:
        # JPype loads native code; JDK 22+ warns unless granted.
        launch.append("--enable-native-access=ALL-UNNAMED")
    return launch + list(options)


def flags_to_read(options: tuple[str, ...] | list[str]) -> list[str]:
    return list(dict.fromkeys([*AES_FLAGS, *requested_flags(options)]))


def java_major(version: str) -> int:
    """17 for "17.0.15", 8 for "1.8.0_402", 0 when unknown."""
    parts = version.split(".")
    first = whole_number(parts[0], most_digits=4)  # a JVM's reply: "²" or 5,000 digits is no version
    if first is None:
        return 0
    second = whole_number(parts[1], most_digits=4) if first == 1 and len(parts) > 1 else None
    return second if second is not None else first


class UntrustedClasspath(ValueError):
    """A --classpath entry that is missing, or that root must not load (jvmbridge.trust.paths)."""


def classpath_entries(entries) -> tuple[str, ...]:
    """Real paths of jars or class folders (a link repointed later loads nothing new); each must exist
    (a JVM skips a missing one silently), and as root none changeable by another user."""
    parts = tuple(part for entry in entries for part in entry.split(os.pathsep) if part)
    real = []
    for part in parts:
        if not (Path(part).is_file() or Path(part).is_dir()):  # a socket, a FIFO or a device is no jar
            raise UntrustedClasspath(f"--classpath {part}: no such jar or folder")
        try:
            real.append(str(trusted_path(part, "--classpath", whole_tree=True)))
        except NotTrusted as e:
            raise UntrustedClasspath(f"{e}; copy it where only root can change it") from None
    return tuple(real)


# Launcher options whose value is the next word (`java --help`).
_TAKES_A_VALUE = {"-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path",
                  "--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
                  "--patch-module", "--enable-native-access", "--source"}


def main_class(words: Sequence[str]) -> str:
    """The main class, -jar jar or -m module/class a JVM's arguments run (as the kernel gives them,
    never re-split on spaces); "" where none."""
    index = 1
    while index < len(words):
        word = words[index]
        if word in ("-jar", "-m", "--module"):
            return words[index + 1] if index + 1 < len(words) else ""
        if not word.startswith("-"):
            return word
        index += 2 if word in _TAKES_A_VALUE else 1
    return ""
