"""Parse `-XX:+PrintFlagsFinal` (and `jcmd PID VM.flags -all`) text, from JDK 8 to current JDKs.

JDK 9+:  `     bool UseAES          = true        {product} {default}`   (kind, then origin)
JDK 8:   `     bool UseAES         := true        {product}`             (`:=` marks a changed value)
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

# PrintFlagsFinal is ~1,000 flags, ~100 KB; larger is not it.
MAX_TEXT_BYTES = 16 * 1024 * 1024

# The head only: value and {kind} {origin} are cut from the right (_tail), so long lines cost linear
# time where a whole-line regex backtracks.
_HEAD = re.compile(r"\s*(?P<type>[a-z][a-z0-9_]*)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s+(?P<op>:?=)")
# Lines a JVM prints around the flags; anything else unparsed is reported.
_EXPECTED_NOISE = re.compile(r"^\s*(\[Global flags\]|\d+:$|(openjdk|java) version|OpenJDK|Java\(TM\)|Java HotSpot"
                             r"|Picked up|NOTE:|WARNING:|warning:)")

# The flags that decide whether crypto runs on CPU instructions, whatever this JVM calls them.
_CRYPTO = re.compile(r"^(UseAES\w*|Use\w*(SHA|MD5|GHASH|ChaCha20|Poly1305|IntPoly|Kyber|Dilithium|BASE64|"
                     r"Montgomery)\w*|UseAVX|UseCLMUL)$")
# A flag forced off by another shows origin "default"; name the flag that decided it.
_PARENTS = {"UseAESIntrinsics": ("UseAES",), "UseAESCTRIntrinsics": ("UseAES", "UseAESIntrinsics"),
            **{f"UseSHA{n}Intrinsics": ("UseSHA",) for n in ("1", "256", "512", "3")}}


class FlagsParseError(ValueError):
    """Text that is not PrintFlagsFinal output."""


@dataclass(frozen=True)
class Flag:
    type: str
    name: str
    value: str
    kind: str  # product, diagnostic, C2 diagnostic, ARCH product, manageable, ...
    origin: str  # default, command line, ergonomic, ...; JDK 8: "default" or "changed"

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FlagTable:
    flags: dict[str, Flag]
    jdk8_style: bool
    unparsed: list[tuple[int, str]]  # (line number, text) of lines that were neither flags nor expected

    @property
    def diagnostics_hidden(self) -> bool:
        """JDK 9+ text without -XX:+UnlockDiagnosticVMOptions lacks the AES intrinsic flags."""
        return not self.jdk8_style and not any("diagnostic" in f.kind for f in self.flags.values())

    def crypto(self) -> list[Flag]:
        return [flag for name, flag in sorted(self.flags.items()) if _CRYPTO.match(name)]

    def forced_off_by(self, flag: Flag) -> Flag | None:
        """The flag whose being switched off (not by default) forced this one off, if one did."""
        for name in _PARENTS.get(flag.name, ()) if flag.value == "false" else ():
            parent = self.flags.get(name)
            if parent and parent.value == "false" and parent.origin != "default":
                return parent
        return None

    def why(self, flag: Flag) -> str:
        """The origin, or the flag that forced this one off."""
        parent = self.forced_off_by(flag)
        return f"follows {parent.name}=false, {parent.origin}" if parent else flag.origin


def parse(text: str, source: str = "input") -> FlagTable:
    """All flags in ``text``; raises FlagsParseError when there are none."""
    if len(text) > MAX_TEXT_BYTES:
        raise FlagsParseError(f"{source}: {len(text):,} characters is too large for PrintFlagsFinal output")
    if "\x00" in text:
        raise FlagsParseError(f"{source}: binary data, not PrintFlagsFinal output")
    flags, unparsed, jdk8 = {}, [], False
    listed: tuple[str, str] | None = None  # a ccstrlist given more than once: its name and its parts so far
    for number, line in enumerate(text.splitlines(), 1):
        match, more = _line(line), _list_part(line, listed)
        if more is not None and listed is not None:
            match = _line(f"ccstrlist {listed[0]} = {more}")  # the last part carries kind and origin
            listed = (listed[0], f"{listed[1]}\n{match.value if match else more}")
            if not match:
                continue
        elif not match and (started := _list_start(line)):
            listed = started
            continue
        if match:
            origin = match.origin
            if origin is None:  # JDK 8: one bracket column, `:=` for a value set by anyone but the default
                jdk8 = True
                origin = "changed" if match.op == ":=" else "default"
            value = match.value
            if listed is not None and listed[0] == match.name:
                value, listed = listed[1], None
            flags[match.name] = Flag(type=match.type, name=match.name, value=value, kind=match.kind.strip(),
                                     origin=origin)
        elif line.strip() and not _EXPECTED_NOISE.match(line):
            unparsed.append((number, line.strip()[:120]))
    if not flags:
        first = f"; line {unparsed[0][0]}: {unparsed[0][1]!r}" if unparsed else ""
        raise FlagsParseError(f"{source}: no PrintFlagsFinal lines found{first}")
    return FlagTable(flags=flags, jdk8_style=jdk8, unparsed=unparsed)


# A ccstrlist given twice spans lines (`NAME = a`, then `NAME += b`, kind and origin on the last);
# HotSpot joins the parts with "\n".
def _list_start(line: str) -> tuple[str, str] | None:
    words = line.split(None, 3)
    return (words[1], words[3].strip()) if len(words) == 4 and words[0] == "ccstrlist" and words[2] == "=" else None


def _list_part(line: str, listed: tuple[str, str] | None) -> str | None:
    """What a `NAME += part` line adds to the list being read, or None when it is no such line."""
    words = line.split(None, 2)
    return words[2] if listed and len(words) == 3 and words[0] == listed[0] and words[1] == "+=" else None


@dataclass(frozen=True)
class _Line:
    """A flag line's parts: `op` ":=" where JDK 8 marks a changed value; `origin` None on JDK 8."""
    type: str
    name: str
    op: str
    value: str
    kind: str
    origin: str | None


def _line(line: str) -> _Line | None:
    """A flag line's parts, None for any other line: brackets taken from the right after whitespace;
    the value is what lies between, never starting with `{`."""
    head = _HEAD.match(line)
    last = _bracket(line[head.end():].rstrip()) if head else None
    if head is None or last is None:
        return None
    before, content = last
    kind = _bracket(before)
    value, kind_text, origin = (before, content, None) if kind is None else (kind[0], kind[1], content)
    value = value.strip()
    if value.startswith("{"):
        return None
    return _Line(type=head["type"], name=head["name"], op=head["op"], value=value, kind=kind_text, origin=origin)


def _bracket(text: str) -> tuple[str, str] | None:
    """(before, content) of the `{...}` ending ``text`` after whitespace, or None."""
    start = text.rfind("{")
    if not text.endswith("}") or start < 1 or "}" in text[start + 1:-1] or not text[start - 1].isspace():
        return None
    return text[:start].rstrip(), text[start + 1:-1]
