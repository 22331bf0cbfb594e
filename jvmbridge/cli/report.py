"""`jvmbridge report`: saved runs side by side, with ratios that say when a difference is noise."""
from __future__ import annotations

import json
from pathlib import Path

import click

from jvmbridge.history import COLUMN_KINDS
from jvmbridge.textable import align

REPORT_FORMATS = ("table", "markdown", "csv", "json")
# 1: first format (runs, comparison rows, notes, problems).
SCHEMA_VERSION = 1


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "output_format", type=click.Choice(REPORT_FORMATS), default="table", show_default=True)
@click.option("--columns", "columns", type=click.Choice(COLUMN_KINDS), default="run", show_default=True,
              help="One column per run, per host, per JDK (JDKs measured in one run or several), or per thread count "
                   "(how throughput scales with compare --threads).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Also draw a figure: FILE ending in .png or .svg (needs matplotlib).")
def report(files, output_format, columns, plot_path):
    """Compare saved runs (JSON-lines files from `compare`): rows by configuration, columns by run."""
    from jvmbridge.history import compare_runs, tidy_frame
    from jvmbridge.store import ResultFileError, read

    if plot_path and Path(plot_path).suffix.lower() not in (".png", ".svg"):
        raise click.UsageError(f"{plot_path}: --plot writes .png or .svg files")
    try:
        loaded = read(list(files))
    except ResultFileError as e:
        raise click.UsageError(str(e)) from None
    for problem in loaded.problems:
        click.echo(f"jvmbridge: {problem}", err=True)
    frame = tidy_frame(loaded)
    if frame.empty:
        raise click.ClickException("no measurements in " + ", ".join(files))
    comparison = compare_runs(frame, columns)
    table = comparison.table.fillna("-")
    if output_format == "json":
        click.echo(json.dumps({"schema_version": SCHEMA_VERSION, "columns": comparison.columns,
                               "comparison": json.loads(comparison.table.to_json(orient="records")),
                               "notes": comparison.notes, "problems": loaded.problems}, indent=2))
    elif output_format == "csv":
        click.echo(comparison.table.to_csv(index=False), nl=False)
    else:
        cells = [list(table.columns)] + [[_cell(v) for v in row] for row in table.itertuples(index=False)]
        lines = _markdown(cells) if output_format == "markdown" else align(cells)
        click.echo("\n".join(lines + [f"Note: {note}" for note in comparison.notes]))
    for failure in loaded.failures:
        click.echo(f"jvmbridge: missing from run {failure['run_id']}: {failure['configuration']} "
                   f"({failure['error']})", err=True)
    if plot_path:
        from jvmbridge.plot import PlotUnavailable, plot_runs

        try:
            plot_runs(frame, Path(plot_path))
        except PlotUnavailable as e:
            raise click.ClickException(str(e)) from None


def _cell(value) -> str:
    return f"{value:,.1f}" if isinstance(value, float) else str(value)


def _markdown(cells: list[list[str]]) -> list[str]:
    header, *body = cells
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in body]
