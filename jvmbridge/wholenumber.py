"""The one reader of a whole number in another party's text (a JVM's reply, a host's document):
ASCII digits only and only a few of them. ``str.isdigit`` takes "²" and "٣", which ``int()``
refuses, and ``int()`` refuses more than 4,300 digits: either was a ValueError out of a parser."""
from __future__ import annotations

# Enough for any count, size, version or pid (2^63 has 19 digits); more is not a number we read.
MOST_DIGITS = 19


def whole_number(text: str, most_digits: int = MOST_DIGITS) -> int | None:
    """``text`` as a non-negative int, or None where it is not one: empty, longer than ``most_digits``,
    or holding anything but the ASCII digits 0-9 (no sign, space or underscore, which int() would take)."""
    if not 0 < len(text) <= most_digits or not (text.isascii() and text.isdigit()):
        return None
    return int(text)
