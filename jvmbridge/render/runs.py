"""`jvmbridge report` output: saved runs side by side, with the notes that say what differs."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import markupsafe
import pandas as pd

from jvmbridge.render import jmh
from jvmbridge.render.html import page
from jvmbridge.render.plot import PlotUnavailable, svg_of
from jvmbridge.render.text import align, as_json, as_lines, csv_of_frame, markdown
from jvmbridge.report.history import RunComparison, Versus, number_runs

# 1: runs, comparison rows, notes, problems.
SCHEMA_VERSION = 1


@dataclass
class RunsDocument:
    comparison: RunComparison
    problems: list[str] = field(default_factory=list)  # what could not be read from the files
    frame: pd.DataFrame | None = None  # the runs' rows (history.tidy_frame), for a page's figure


def render_table(document: RunsDocument, width: int | None = None) -> str:
    return _render(document, lambda cells: wrapped_columns(cells, width))


def wrapped_columns(cells: list[list[str]], width: int | None) -> list[str]:
    """The table in blocks that fit ``width``, each with the configurations: columns wrap, never a row."""
    whole = align(cells)
    if width is None or max(map(len, whole)) <= width:
        return whole
    lines: list[str] = []
    for number, block in enumerate(_blocks(cells, _column_groups(cells[0]), width)):
        lines += ([""] if number else []) + _columns(cells, block)
    return lines


def _columns(cells: list[list[str]], block: list[int]) -> list[str]:
    """The configurations and the columns ``block`` names, aligned."""
    return align([[row[0], *(row[i] for i in block)] for row in cells])


def _column_groups(header: list[str]) -> list[list[int]]:
    """The columns after the configuration, by index, in the groups that stay together."""
    groups: list[list[int]] = []  # a column's figure and its comparison stay together
    for index, name in enumerate(header[1:], 1):
        if " vs " in name and groups:
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def _blocks(cells: list[list[str]], groups: list[list[int]], width: int) -> list[list[int]]:
    """``groups`` of columns in blocks fitting ``width`` beside the configurations (one at least)."""
    blocks: list[list[int]] = [[]]
    for group in groups:
        trial = blocks[-1] + group
        if blocks[-1] and max(map(len, _columns(cells, trial))) > width:
            blocks.append(list(group))
        else:
            blocks[-1] = trial
    return blocks


def render_markdown(document: RunsDocument) -> str:
    return _render(document, markdown)


def _render(document: RunsDocument, tabulate) -> str:
    comparison = document.comparison
    table = comparison.table.fillna("-")
    cells = [list(table.columns)] + [[_cell(v) for v in row] for row in table.itertuples(index=False)]
    return as_lines(tabulate(cells) + [f"Note: {note}" for note in comparison.notes])


def render_csv(document: RunsDocument) -> str:
    return csv_of_frame(document.comparison.table)


def render_json(document: RunsDocument) -> str:
    comparison = document.comparison
    # Each "vs" cell as numbers, as compare's ratios are.
    rows = [{column: value.as_dict() if isinstance(value, Versus) else value for column, value in record.items()}
            for record in comparison.table.to_dict(orient="records")]
    return as_json({"schema_version": SCHEMA_VERSION, "columns": comparison.columns, "comparison": rows,
                    "notes": comparison.notes, "problems": document.problems})


def render_jmh(document: RunsDocument) -> str:
    """Every saved row in JMH's `-rf json` shape, a "run" param naming its run where several."""
    if document.frame is None:
        raise ValueError("a JMH rendering needs the runs' rows (RunsDocument.frame)")
    frame = number_runs(document.frame)
    several = frame.run.nunique() > 1
    return as_json([record for _, rows in frame.groupby("run_order", sort=True)
                    for record in jmh.records(rows, _round_seconds(rows),
                                              {"run": rows.run.iloc[0]} if several else None)])


def _round_seconds(rows: pd.DataFrame) -> float | None:
    seconds = rows.round_seconds.iloc[0] if "round_seconds" in rows else None
    return None if seconds is None or pd.isna(seconds) else float(seconds)


def _cell(value) -> str:
    return f"{value:,.1f}" if isinstance(value, float) else str(value)


def render_html(document: RunsDocument) -> str:
    """A page: the table with intervals and coloured ratios, the figure inline, the notes."""
    comparison = document.comparison
    table = comparison.table
    rows = [[_html_cell(comparison, record["configuration"], column, record[column]) for column in table.columns]
            for record in table.to_dict(orient="records")]
    figure, no_figure = None, None
    if document.frame is not None:
        try:
            figure = markupsafe.Markup(svg_of(document.frame, comparison))
        except PlotUnavailable as e:
            no_figure = f"No figure: {e}."
    runs = len(comparison.columns)
    return page("runs.html", f"jvmbridge report: {runs} column{'s' if runs != 1 else ''}, {len(table)} configurations",
                header=list(table.columns), rows=rows, figure=figure, no_figure=no_figure, notes=comparison.notes,
                problems=document.problems)


def _html_cell(comparison: RunComparison, configuration: str, column: str, value) -> dict:
    """A cell as the page shows it: text, interval and kind for the style."""
    if isinstance(value, Versus):
        ratio = value.ratio
        kind = "same" if ratio is None or not ratio.significant else "faster" if ratio.value > 1 else "slower"
        return {"text": str(value), "kind": f"number {kind}", "interval": ""}
    if column.endswith(" ns/op"):
        return _ns_per_op_cell(comparison.cells.get((configuration, column.removesuffix(" ns/op"))), value)
    if isinstance(value, float):  # a figure in a column of its own kind (report --columns size)
        return {"text": "-" if pd.isna(value) else _cell(value), "kind": "number", "interval": ""}
    return {"text": str(value), "kind": "", "interval": ""}


def _ns_per_op_cell(row, value) -> dict:
    """A figure's cell, with its interval as a share of it where it has one."""
    if row is None:
        return {"text": "-", "kind": "number", "interval": ""}
    if not value:
        interval = ""
    elif pd.isna(row.ns_per_op_error) or math.isinf(row.ns_per_op_error):  # one fork left: said, not hidden
        interval = "no interval"
    else:
        interval = f"±{row.ns_per_op_error / value:.1%}"
    return {"text": _cell(value), "kind": "number", "interval": interval}
