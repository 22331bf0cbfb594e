"""The one reader of whole numbers in another party's text: ASCII digits only, and few. isdigit()
takes "²", which int() refuses, and int() refuses over 4,300 digits: each was a parser's ValueError."""
from __future__ import annotations

# 2^63 has 19 digits: enough for any count, size, version or pid.
MOST_DIGITS = 19


def whole_number(text: str, most_digits: int = MOST_DIGITS) -> int | None:
    """``text`` as a non-negative int, or None: empty, over ``most_digits``, or not all ASCII 0-9."""
    if not 0 < len(text) <= most_digits or not (text.isascii() and text.isdigit()):
        return None
    return int(text)
