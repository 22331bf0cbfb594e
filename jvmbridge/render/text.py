"""Plain-text and Markdown tables: columns padded to their widest cell, numbers right-aligned;
and text from hosts and processes made safe to print."""
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

# C0 and C1 controls (a terminal acts on ESC, CSI, OSC ...), DEL, the Unicode marks that reorder
# what is shown (bidirectional overrides), the line and paragraph separators (str.splitlines and
# some terminals break a line at them, so a host's text could cut a table's row) and the invisible
# format characters: host names, command lines, flag listings and fleet documents come from
# machines that may be someone else's.
_MARKS = r"\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
_UNSAFE = re.compile(r"[\x00-\x1f" + _MARKS + "]")
_UNSAFE_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f" + _MARKS + "]")
_NAMED = {"\n": r"\n", "\t": r"\t", "\r": r"\r"}


def printable(text: str, lines: bool = False) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\n``, ``\\u202e``),
    so that it reaches a terminal as what it says; with ``lines``, newlines are kept."""
    return (_UNSAFE_BUT_NEWLINE if lines else _UNSAFE).sub(_escape, text)


def as_lines(lines: list[str]) -> str:
    """``lines`` as a document for people: each line printable(), so a newline inside one (a value
    from a host, a JDK or a file) is shown escaped and can never start a line of its own."""
    return "".join(printable(line) + "\n" for line in lines)


def _escape(found: re.Match) -> str:
    char = found.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


# A spreadsheet runs a cell that begins with one of these as a formula (=HYPERLINK(...),
# @SUM(...), -2+3+cmd|' /C calc'!A0): OWASP's "CSV injection". Such a cell gets a ' before it,
# which the spreadsheet shows as text; a number, or "-" alone (a table's "none"), is left as it is.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER_OR_DASH = re.compile(r"-|-?\d+(\.\d*)?([eE][-+]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A CSV cell safe to open in a spreadsheet and to print: a text that a spreadsheet would take
    for a formula prefixed with ', and its control characters escaped (printable) as on a terminal,
    so a terminal and a pipe get the same text; a value that is not text (a number) as it is."""
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


# A column wrapped to fit a terminal keeps at least this many characters a line; with less room
# the lines are left long (the terminal wraps them) rather than cut into slivers.
WRAP_LEAST = 24


def align(rows: list[list[str]], right_from: int | None = None, width: int | None = None) -> list[str]:
    """``rows`` (header first) as lines; columns from ``right_from`` on are right-aligned. With
    ``width``, where a line would be longer, the text of the widest column (a reason, a path)
    continues on lines of its own below, the other cells blank there: a row's other cells stay on
    one line, and every line fits (where the column keeps WRAP_LEAST characters)."""
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    if width is not None:
        rows, widths = _widest_wrapped(rows, widths, width)
    right_from = len(widths) if right_from is None else right_from
    return ["  ".join(cell.rjust(w) if i >= right_from else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]


def _widest_wrapped(rows: list[list[str]], widths: list[int], width: int) -> tuple[list[list[str]], list[int]]:
    """``rows`` and their columns' ``widths`` with the widest column wrapped so that every line fits
    ``width``; as they are where it fits already, or the column would keep less than WRAP_LEAST."""
    column = widths.index(max(widths))
    room = width - (sum(widths) - widths[column]) - 2 * (len(widths) - 1)
    if not WRAP_LEAST <= room < widths[column]:
        return rows, widths
    return ([line for row in rows for line in _wrapped(row, column, room)],
            [*widths[:column], room, *widths[column + 1:]])


def fitted(rows: list[list[str]], width: int | None, expendable: list[str],
           right_from: int | None = None) -> tuple[list[str], list[str]]:
    """``rows`` (header first) aligned in ``width`` columns where they can be: the columns named in
    ``expendable`` (by header, least needed first) left out one by one until every line fits. The
    lines, and the headers left out. ``width`` None: every column."""
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


# What Markdown reads inside a table cell as more than text: a link or an image (`[`, `](`, `![`),
# code (backticks), the next cell (`|`), and a backslash before punctuation (which would escape our
# escape). Each gets a backslash, so a host's `![b](http://evil/b.png)` is shown as written; <, >
# and & are HTML's (fence_prose); printable's `\x1b` is left as it is (no escape before a letter).
_MARKDOWN_SPECIAL = re.compile(r"[`\[\]|]|\\(?=[!-/:-@\[-`{-~])")


def markdown(rows: list[list[str]]) -> list[str]:
    """``rows`` (header first) as a Markdown table; every cell shown as its text (_MARKDOWN_SPECIAL)."""
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
    """``text`` in lines of at most ``room`` characters, broken at spaces; a word longer than that
    (a path) after a "/" where it has one."""
    pieces = []
    for piece in textwrap.wrap(text, room, break_on_hyphens=False, break_long_words=False) or [""]:
        while len(piece) > room:
            cut = piece.rfind("/", 1, room) + 1 or room
            pieces.append(piece[:cut])
            piece = piece[cut:]
        pieces.append(piece)
    return pieces


def aligned_block(rows: list[list[str]], indent: str = "  ", width: int | None = None) -> list[str]:
    """A table inside a document for people: aligned, indented under the line that names it; its
    widest column wrapped to fit ``width`` (align)."""
    return [indent + line for line in align(rows, width=None if width is None else width - len(indent))]


def markdown_block(rows: list[list[str]], indent: str = "") -> list[str]:
    """A table inside a Markdown document: set apart by blank lines, where a renderer sees a table
    (never indented: an indented line is code to it)."""
    return ["", *markdown(rows), ""]


def fence_prose(text: str) -> str:
    """A Markdown document whose tables are tables and whose other lines stay as written: each run
    of lines that are not a table (a header, a list of notes, a summary) becomes a fenced block, so
    a renderer neither joins them into one paragraph nor reads a note after a table as its row.
    In the tables, &, < and > are written as HTML's entities: text from hosts is shown, never
    run as HTML (inside a fence a renderer shows it as it is)."""
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            fence = "```" + "`" * max((len(run) for line in block for run in re.findall(r"`{3,}", line)), default=0)
            out.extend([fence + "text", *block, fence])
            block.clear()

    # Split on "\n" alone: a host's text escapes every other character str.splitlines() breaks at.
    lines, table = text.removesuffix("\n").split("\n"), False
    for number, line in enumerate(lines):
        # A table is a header and its delimiter row (markdown() writes both), then its rows: a line
        # of a host's that merely starts with "|" is prose, fenced.
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
