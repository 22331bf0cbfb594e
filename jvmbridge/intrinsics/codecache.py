"""What a running JVM's JIT compiled, from `jcmd PID Compiler.codelist` (JDK 9+): level 4 is C2,
state 0 in use. Untrusted text: split on whitespace only, linear in its length."""
from __future__ import annotations

from dataclasses import dataclass, field

from jvmbridge.intrinsics.compilers import C2_LEVEL, INTRINSIC_IDS
from jvmbridge.intrinsics.modes import Mode
from jvmbridge.wholenumber import whole_number

_SUNJCE = "com.sun.crypto.provider."
_IN_USE = "0"
# A method's decrypting twin is the same intrinsic path: either shows the mode hot.
_TWINS = (("Decrypt", "Encrypt"),)


@dataclass
class CodeCache:
    """The SunJCE methods the JIT compiled, as "Class::method" -> the highest level in use."""
    levels: dict[str, int] = field(default_factory=dict)
    error: str | None = None  # the list could not be read: why

    def intrinsic_levels(self) -> dict[str, int]:
        """The levels of every mode's intrinsic methods: what a document keeps."""
        return {name: level for name, level in sorted(self.levels.items()) if name in INTRINSIC_IDS}

    def c2_compiled(self, mode: Mode) -> list[str]:
        """The mode's intrinsic methods C2 compiled, where they prove a path in use; else []."""
        at_c2 = {_encrypting(name) for name, level in self.levels.items() if level == C2_LEVEL}
        for path in mode.paths:
            if path.methods <= at_c2:
                return sorted(path.methods)
        return []

    def c1_compiled(self, mode: Mode) -> list[str]:
        """The mode's intrinsic methods compiled by C1 alone."""
        methods = {method for path in mode.paths for method in path.methods}
        return sorted(name for name, level in self.levels.items()
                      if _encrypting(name) in methods and 0 < level < C2_LEVEL)


def parse_codelist(text: str) -> CodeCache:
    """The SunJCE methods of a Compiler.codelist reply and the highest level each is in use at."""
    cache = CodeCache()
    for line in text.splitlines():
        fields = line.split(None, 4)
        if len(fields) < 4 or not _id(fields[0]) or not _level(fields[1]) or fields[2] != _IN_USE:
            continue  # not a line of the list: read as nothing, never as a number int() refuses
        qualified = fields[3].partition("(")[0]
        if not qualified.startswith(_SUNJCE):
            continue
        owner, _, method = qualified[len(_SUNJCE):].rpartition(".")
        name, level = f"{owner}::{method}", int(fields[1])  # one ASCII digit: _level
        cache.levels[name] = max(level, cache.levels.get(name, 0))
    return cache


def _encrypting(name: str) -> str:
    for other, mine in _TWINS:
        name = name.replace(other, mine)
    return name


def _id(text: str) -> bool:
    """A compile id: at most 10 ASCII digits, so no reply reaches int()'s length limit."""
    return whole_number(text, most_digits=10) is not None


def _level(text: str) -> bool:
    """A compilation level: 0 (a native wrapper) to 4 (C2)."""
    level = whole_number(text, most_digits=1)
    return level is not None and level <= C2_LEVEL
