"""`jvmbridge report`: saved runs side by side, with ratios that say when a difference is noise."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from jvmbridge.cli.common import (
    DOCUMENT_AS_JSON,
    export_options,
    format_option,
    in_existing_folder,
    output_option,
    print_document,
    quiet_option,
    read_fleet,
    terminal_width,
    write_exports,
)
from jvmbridge.cli.say import say
from jvmbridge.report.columns import COLUMN_KINDS


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@format_option("runs", "fleet")
@click.option("--columns", "columns", type=click.Choice(COLUMN_KINDS), default="run", show_default=True,
              help="One column per run, per host, per JDK (JDKs measured in one run or several), per thread count "
                   "(how throughput scales with compare --threads), per setting (on beside off), or per size "
                   "(openssl speed's layout, in its units).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              callback=in_existing_folder,
              help="Also draw a figure: FILE ending in .png or .svg (needs matplotlib).")
@click.option("--baseline", metavar="COLUMN|FILE",
              help="Compare every other column with this one (its label as the header shows it, e.g. \"run 2\" "
                   "or \"JDK 25.0.3\", or one of the files given) [default: the first column].")
@export_options("runs", "fleet")
@output_option(DOCUMENT_AS_JSON)
@click.option("--wide", is_flag=True, help="The table in one block however wide; by default its columns wrap "
                                           "into blocks that fit the terminal (a compare run's table leaves some out).")
@quiet_option
def report(files, output_format, columns, baseline, plot_path, exports, output, wide, quiet):
    """Compare saved runs (JSON-lines files from `compare`): rows by configuration, columns by run.

    Given `check --format json` documents (files, or folders of them as `jvmbridge fleet` saves):
    one fleet table, host x JDK or JVM x mode, exit code as `check`'s over every host.
    """
    paths = [path for given in map(Path, files)
             for path in (sorted(given.glob("*.json")) if given.is_dir() else [given])]
    if _check_documents(paths):
        if baseline:
            raise click.UsageError("--baseline compares saved `compare` runs, not `check` documents")
        _fleet_report(paths, output_format, plot_path, output, quiet, exports)
    if any(Path(given).is_dir() for given in files):
        raise click.UsageError("a folder is read for `check` documents (*.json) only; give run files by name")
    _refuse_formats_not_of("runs", output_format, exports)
    width = terminal_width(wide)
    if not runs_report(files, output_format, columns, plot_path, output, quiet, exports, baseline, width):
        sys.exit(1)


# A format the other kind of document has, refused: {wanted}, and the formats {document} has.
_NOT_A_FORMAT_OF = {"runs": "{wanted} is a format of a fleet's `check` documents; saved `compare` runs have {formats}",
                    "fleet": "{wanted} is a format of saved `compare` runs; a fleet of `check` documents has {formats}"}


def _refuse_formats_not_of(document: str, output_format: str, exports: Sequence[tuple[str, Path]]) -> None:
    """A usage error for the first format asked for (--format, then each export's) that ``document`` lacks."""
    from jvmbridge.render import FORMATS

    for wanted in (output_format, *(f for f, _ in exports)):
        if wanted not in FORMATS[document]:
            raise click.UsageError(_NOT_A_FORMAT_OF[document].format(wanted=wanted,
                                                                      formats=", ".join(FORMATS[document])))


def _check_documents(paths: list[Path]) -> bool:
    """Whether ``paths`` are a fleet's `check` documents: *.json files, at least one of them a
    `check` document (one that is not becomes a host not checked, as a hostile host's would)."""
    from jvmbridge.fleet.report import is_check_document

    return bool(paths) and all(path.suffix == ".json" for path in paths) and any(map(is_check_document, paths))


def _fleet_report(paths: list[Path], output_format: str, plot_path, output: Path | None, quiet: bool,
                  exports: list[tuple[str, Path]]) -> None:
    if plot_path:
        raise click.UsageError("--plot draws saved `compare` runs, not `check` documents")
    _refuse_formats_not_of("fleet", output_format, exports)
    fleet = read_fleet(paths)
    saved = print_document("fleet", output_format, fleet, output, quiet, exports, terminal_width())
    sys.exit(fleet.exit_code if saved else max(fleet.exit_code, 2))  # 2: could not do all it was asked


def runs_report(files, output_format: str, columns: str, plot_path, output: Path | None = None,
                quiet: bool = False, exports: Sequence[tuple[str, Path]] = (), baseline: str | None = None,
                width: int | None = None, hosts_from_files: bool = False) -> bool:
    """Saved `compare` runs side by side (also `fleet --compare`'s); False when ``output`` could not be
    saved. ``width``: the terminal's, which the table for people is fitted to (None: as wide as it is).
    ``hosts_from_files``: each run's host is its file's name (a fleet's, <inventory name>.jsonl), not
    what the run says, which its host wrote."""
    from jvmbridge.render.runs import RunsDocument
    from jvmbridge.report.history import compare_runs, tidy_frame

    if plot_path and Path(plot_path).suffix.lower() not in (".png", ".svg"):
        raise click.UsageError(f"{plot_path}: --plot writes .png or .svg files")
    loaded = _read_runs(files, hosts_from_files)
    frame = tidy_frame(loaded)
    if frame.empty:
        raise click.ClickException("no measurements in " + ", ".join(files))
    try:
        comparison = compare_runs(frame, columns, baseline)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    document = RunsDocument(comparison=comparison, problems=loaded.problems, frame=frame)
    single = _one_compare_run(loaded) if columns == "run" else None
    if single is None:
        saved = print_document("runs", output_format, document, output, quiet, exports, width)
    else:
        saved = _print_as_compare(single, document, output_format, output, quiet, exports, width)
    for failure in loaded.failures:
        say(f"missing from run {failure['run_id']}: {failure['configuration']} ({failure['error']})")
    if plot_path:
        _plot(frame, comparison, plot_path, quiet)
    return saved


def _read_runs(files, hosts_from_files: bool):
    """The saved runs in ``files``, what could not be read said; a file that is no run file a usage error."""
    from jvmbridge.saved.store import ResultFileError, read

    try:
        loaded = read(list(files))
    except ResultFileError as e:
        raise click.UsageError(str(e)) from None
    if hosts_from_files:
        for run in loaded.runs.values():
            run["host"] = Path(run["file"]).stem
    for problem in loaded.problems:  # even with --quiet: what could not be read is not in the table
        say(problem)
    return loaded


def _print_as_compare(single, document, output_format: str, output: Path | None, quiet: bool,
                      exports: Sequence[tuple[str, Path]], width: int | None) -> bool:
    """One compare run: shown as compare showed it, in every format compare has (a page as report's)."""
    from jvmbridge.render import FORMATS

    as_compare = [e for e in exports if e[0] in FORMATS["compare"]]
    shown = ("compare", single) if output_format in FORMATS["compare"] else ("runs", document)
    saved = print_document(shown[0], output_format, shown[1], output, quiet, as_compare, width)
    return write_exports("runs", document, [e for e in exports if e not in as_compare], quiet) and saved


def _plot(frame, comparison, plot_path, quiet: bool) -> None:
    from jvmbridge.render.plot import PlotUnavailable, plot_runs

    try:
        plot_runs(frame, comparison, Path(plot_path))
    except PlotUnavailable as e:
        raise click.ClickException(str(e)) from None
    except OSError as e:
        raise click.ClickException(f"{plot_path}: {e.strerror}") from None
    if not quiet:
        say(f"figure written to {plot_path}")


def _one_compare_run(loaded):
    """The saved compare run, where the files hold exactly one (not a published text); else None."""
    from jvmbridge.comparison.runner import saved_comparison

    if len(loaded.runs) != 1 or next(iter(loaded.runs)).startswith("speed:"):
        return None
    return saved_comparison(loaded, next(iter(loaded.runs)))
