"""Plain-text tables: columns padded to their widest cell, numbers right-aligned."""
from __future__ import annotations


def align(rows: list[list[str]], right_from: int | None = None) -> list[str]:
    """``rows`` (header first) as lines; columns from ``right_from`` on are right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right_from = len(widths) if right_from is None else right_from
    return ["  ".join(cell.rjust(w) if i >= right_from else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
