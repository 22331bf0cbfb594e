"""`jvmbridge report` output: saved runs side by side, with the notes that say what differs."""
from __future__ import annotations

from dataclasses import dataclass, field

from jvmbridge.saved.history import RunComparison, Versus
from jvmbridge.render.text import align, as_json, as_lines, markdown

# 1: first format (runs, comparison rows, notes, problems).
SCHEMA_VERSION = 1


@dataclass
class RunsDocument:
    comparison: RunComparison
    problems: list[str] = field(default_factory=list)  # what could not be read from the files


def render_table(document: RunsDocument) -> str:
    return _render(document, align)


def render_markdown(document: RunsDocument) -> str:
    return _render(document, markdown)


def _render(document: RunsDocument, tabulate) -> str:
    comparison = document.comparison
    table = comparison.table.fillna("-")
    cells = [list(table.columns)] + [[_cell(v) for v in row] for row in table.itertuples(index=False)]
    return as_lines(tabulate(cells) + [f"Note: {note}" for note in comparison.notes])


def render_csv(document: RunsDocument) -> str:
    return document.comparison.table.to_csv(index=False)


def render_json(document: RunsDocument) -> str:
    comparison = document.comparison
    # Each "vs" cell as numbers (times, low, high, significant), as compare's ratios are.
    rows = [{column: value.as_dict() if isinstance(value, Versus) else value for column, value in record.items()}
            for record in comparison.table.to_dict(orient="records")]
    return as_json({"schema_version": SCHEMA_VERSION, "columns": comparison.columns, "comparison": rows,
                    "notes": comparison.notes, "problems": document.problems})


def _cell(value) -> str:
    return f"{value:,.1f}" if isinstance(value, float) else str(value)
