"""Plain-text and Markdown tables: columns padded to their widest cell, numbers right-aligned."""
from __future__ import annotations

import json
from typing import Any


def align(rows: list[list[str]], right_from: int | None = None) -> list[str]:
    """``rows`` (header first) as lines; columns from ``right_from`` on are right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right_from = len(widths) if right_from is None else right_from
    return ["  ".join(cell.rjust(w) if i >= right_from else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]


def markdown(rows: list[list[str]]) -> list[str]:
    """``rows`` (header first) as a Markdown table; pipes inside cells escaped."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    header, *body = rows
    return [line(header), "|" + "---|" * len(header), *map(line, body)]


def as_json(document: Any) -> str:
    return json.dumps(document, indent=2) + "\n"
