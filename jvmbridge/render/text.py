"""Plain-text and Markdown tables, and text from hosts and processes made safe to print."""
from __future__ import annotations

import csv
import html
import io
import re
import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from jvmbridge import jsontext

# Controls (a terminal acts on ESC, CSI, OSC), DEL, bidirectional overrides, line separators (which
# could cut a table row) and invisible format characters: host text may be someone else's.
_MARKS = r"\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
_UNSAFE = re.compile(r"[\x00-\x1f" + _MARKS + "]")
_UNSAFE_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f" + _MARKS + "]")
_NAMED = {"\n": r"\n", "\t": r"\t", "\r": r"\r"}


def printable(text: str, lines: bool = False) -> str:
    """``text`` with every control character written as an escape; with ``lines``, newlines kept."""
    return (_UNSAFE_BUT_NEWLINE if lines else _UNSAFE).sub(_escape, text)


def as_lines(lines: list[str]) -> str:
    """``lines`` for people, each printable(): a newline inside one can never start a line."""
    return "".join(printable(line) + "\n" for line in lines)


def _escape(found: re.Match) -> str:
    char = found.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


# A cell starting with these runs as a spreadsheet formula (OWASP's "CSV injection"): it gets a ';
# a number, or "-" alone, is left as it is.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER_OR_DASH = re.compile(r"-|-?\d+(\.\d*)?([eE][-+]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A CSV cell safe in a spreadsheet and a terminal; a non-text value as it is."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_STARTS) and not _NUMBER_OR_DASH.fullmatch(value):
        value = "'" + value
    return printable(value)


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """``rows`` (header first) as CSV, each cell a csv_cell."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([csv_cell(cell) for cell in row] for row in rows)
    return out.getvalue()


def csv_of_frame(frame: pd.DataFrame) -> str:
    """``frame`` as CSV (no index), each cell and column name a csv_cell."""
    return frame.apply(lambda column: column.map(csv_cell)).rename(columns=csv_cell).to_csv(index=False,
                                                                                       lineterminator="\n")


# A wrapped column keeps at least this many characters a line; with less room lines stay long.
WRAP_LEAST = 24


def align(rows: list[list[str]], right_from: int | None = None, width: int | None = None) -> list[str]:
    """``rows`` as lines, right-aligned from ``right_from``; the widest column wraps to ``width``."""
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    if width is not None:
        rows, widths = _widest_wrapped(rows, widths, width)
    right_from = len(widths) if right_from is None else right_from
    return ["  ".join(cell.rjust(w) if i >= right_from else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]


def _widest_wrapped(rows: list[list[str]], widths: list[int], width: int) -> tuple[list[list[str]], list[int]]:
    """``rows`` and ``widths`` with the widest column wrapped to fit ``width`` (unless under WRAP_LEAST)."""
    column = widths.index(max(widths))
    room = width - (sum(widths) - widths[column]) - 2 * (len(widths) - 1)
    if not WRAP_LEAST <= room < widths[column]:
        return rows, widths
    return ([line for row in rows for line in _wrapped(row, column, room)],
            [*widths[:column], room, *widths[column + 1:]])


def fitted(rows: list[list[str]], width: int | None, expendable: list[str],
           right_from: int | None = None) -> tuple[list[str], list[str]]:
    """``rows`` aligned in ``width`` columns, ``expendable`` columns (least needed first) dropped until
    every line fits; the lines and the headers dropped. ``width`` None: every column."""
    left_out: list[str] = []
    while True:
        lines = align(rows, right_from)
        if width is None or max(map(len, lines)) <= width:
            return lines, left_out
        candidates = [name for name in expendable if name in rows[0] and name not in left_out]
        if not candidates:
            return lines, left_out
        left_out.append(candidates[0])
        rows, right_from = _without_column(rows, rows[0].index(candidates[0]), right_from)


def _without_column(rows: list[list[str]], column: int, right_from: int | None) -> tuple[list[list[str]], int | None]:
    """``rows`` without their cell ``column``, and ``right_from`` where it then falls."""
    if right_from is not None and column < right_from:
        right_from -= 1
    return [row[:column] + row[column + 1:] for row in rows], right_from


# What a Markdown table cell reads as more than text (links, images, code, `|`, backslash before
# punctuation) gets a backslash: a host's `![b](http://evil/b.png)` shows as written.
_MARKDOWN_SPECIAL = re.compile(r"[`\[\]|]|\\(?=[!-/:-@\[-`{-~])")


def markdown(rows: list[list[str]]) -> list[str]:
    """``rows`` (header first) as a Markdown table, each cell shown as its text."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(_MARKDOWN_SPECIAL.sub(r"\\\g<0>", printable(cell)) for cell in cells) + " |"

    header, *body = rows
    return [line(header), "|" + "---|" * len(header), *map(line, body)]


def _wrapped(row: list[str], column: int, room: int) -> list[list[str]]:
    """``row`` as the rows its cell ``column`` takes when wrapped at ``room`` characters."""
    pieces = _pieces(row[column], room)
    return [[*row[:column], pieces[0], *row[column + 1:]]] + [
        ["" if i != column else piece for i in range(len(row))] for piece in pieces[1:]]


def _pieces(text: str, room: int) -> list[str]:
    """``text`` in lines of at most ``room``, broken at spaces, a long word (a path) after a "/"."""
    pieces = []
    for piece in textwrap.wrap(text, room, break_on_hyphens=False, break_long_words=False) or [""]:
        while len(piece) > room:
            cut = piece.rfind("/", 1, room) + 1 or room
            pieces.append(piece[:cut])
            piece = piece[cut:]
        pieces.append(piece)
    return pieces


def aligned_block(rows: list[list[str]], indent: str = "  ", width: int | None = None) -> list[str]:
    """A table in a document for people: aligned, indented, its widest column wrapped to ``width``."""
    return [indent + line for line in align(rows, width=None if width is None else width - len(indent))]


def markdown_block(rows: list[list[str]], indent: str = "") -> list[str]:
    """A table in a Markdown document: set apart by blank lines, never indented (that is code)."""
    return ["", *markdown(rows), ""]


def fence_prose(text: str) -> str:
    """A Markdown document whose non-table lines are fenced (never joined or read as rows), its tables'
    &, < and > as HTML entities: text from hosts is never run as HTML."""
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            fence = "```" + "`" * max((len(run) for line in block for run in re.findall(r"`{3,}", line)), default=0)
            out.extend([fence + "text", *block, fence])
            block.clear()

    # "\n" alone: a host's text escapes every other character splitlines() breaks at.
    lines, table = text.removesuffix("\n").split("\n"), False
    for number, line in enumerate(lines):
        # A table is a header and its delimiter row: a host's line merely starting with "|" is prose.
        after = lines[number + 1] if number + 1 < len(lines) else ""
        table = line.startswith("|") and (table or (after.startswith("|---|") and set(after) == {"|", "-"}))
        if table or not line.strip():
            flush()
            out.append(html.escape(line, quote=False))  # outside a fence a renderer runs HTML: <script>, <img onerror>
        else:
            block.append(line)
    flush()
    return "\n".join(out) + "\n"


def as_json(document: Any) -> str:
    return jsontext.dumps(document, indent=2) + "\n"
