"""Options and conversions shared by the commands."""
from __future__ import annotations

import functools
import math
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from jvmbridge.cli.say import say
from jvmbridge.jvm.discovery import JavaInstall, JvmNotFound, find_javas
from jvmbridge.jvm.optionfiles import TRUST_OPTION, UntrustedOption, admitted_options, trust_any_jvm_arg
from jvmbridge.jvm.options import UntrustedClasspath, classpath_entries
from jvmbridge.sampling.workload import MAX_MESSAGE_BYTES, parse_count, parse_sizes
from jvmbridge.trust.writer import open_for_writing, replace_whole


class Count(click.ParamType):
    """An iteration count: 1e8, 100000000, 1_000_000, 2.5e6."""
    name = "count"

    def convert(self, value, param, ctx):
        try:
            return parse_count(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class Sizes(click.ParamType):
    """Message sizes in bytes: 38, a list such as 16,64,256, "sweep" or "cliffs"."""
    name = "sizes"

    def convert(self, value, param, ctx):
        if isinstance(value, list):
            return value
        try:
            sizes = parse_sizes(str(value))
        except ValueError as e:
            self.fail(str(e), param, ctx)
        # Refused here, by the option's name, not once the run has begun.
        for size in sizes:
            if not 0 <= size <= MAX_MESSAGE_BYTES:
                self.fail(f"a message is 0 to {MAX_MESSAGE_BYTES} bytes (64 MiB), not {size}", param, ctx)
        return sizes


class Finite(click.FloatRange):
    """A number within a range, and a number at all: nan passes every comparison a range makes, and
    inf is no count of anything, so both are refused first."""
    name = "number"
    what = "a finite number"

    def convert(self, value, param, ctx):
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not {self.what}", param, ctx)
        return super().convert(number, param, ctx)


class Seconds(Finite):
    """A duration in seconds within a range."""
    name = "seconds"
    what = "a number of seconds"


# The largest pid Linux hands out (PID_MAX_LIMIT, 2^22): a larger number names no process.
PID_MAX = 4_194_304


class Pid(click.IntRange):
    """A process id: 1 to PID_MAX, so a number too large for the kernel is refused as bad input."""
    name = "pid"

    def __init__(self) -> None:
        super().__init__(1, PID_MAX)


class JavaPath(click.ParamType):
    """A java binary or JAVA_HOME that exists, or a bare name of a command on PATH ("java")."""
    name = "path"

    def convert(self, value, param, ctx):
        if not (Path(value).exists() or ("/" not in value and shutil.which(value))):
            self.fail(f"{value}: no such file or directory", param, ctx)
        return value


class ProviderName(click.ParamType):
    """A JCE provider: SunJCE, BC, ACCP, or a provider class name."""
    name = "provider"

    def convert(self, value, param, ctx):
        from jvmbridge.jvm.providers import provider

        try:
            provider(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)
        return value


def in_existing_folder(ctx, param, value):
    """A file to write, whose folder must exist: a typo in it is refused, not made into folders."""
    if value is None:
        return None
    folder = Path(value).expanduser().absolute().parent
    if not folder.is_dir():
        raise click.BadParameter(f"{folder}: no such folder (make it first)", ctx, param)
    return Path(value)


def output_option(saves: str):
    """-o/--output FILE, on every command that prints a document: where it saves its data (``saves``
    says what, for --help); the folder must exist."""
    return click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
                        callback=in_existing_folder, help=saves)


DOCUMENT_AS_JSON = "Also save the document as JSON (as --format json prints it) to FILE."

quiet_option = click.option("--quiet", "-q", is_flag=True,
                            help="No progress and no \"saved to\" line on stderr (errors and what could not be read still).")


_FORMAT_NAMES = {"json": "JSON", "csv": "CSV", "markdown": "Markdown", "jmh": "JMH's -rf json results",
                 "html": "a self-contained HTML page",
                 "openmetrics": "Prometheus metrics (node_exporter's textfile collector reads them; written whole, "
                                "by a rename)"}


def export_options(*documents: str):
    """--export-FORMAT FILE for each format ``documents`` have but the table (repeatable, as hyperfine's
    exports): the document written to FILE in that format beside what is printed. The command gets
    them as one ``exports`` argument: [(format, path), ...]."""
    from jvmbridge.render import FORMATS

    formats = [f for f in dict.fromkeys(f for document in documents for f in FORMATS[document]) if f != "table"]

    def decorate(command):
        @functools.wraps(command)
        def packed(*args, **kwargs):
            kwargs["exports"] = [(f, path) for f in formats for path in kwargs.pop(f"export_{f}")]
            return command(*args, **kwargs)

        for f in reversed(formats):
            packed = click.option(f"--export-{f}", f"export_{f}", multiple=True, metavar="FILE",
                                  type=click.Path(dir_okay=False, writable=True),
                                  callback=lambda ctx, param, paths: tuple(in_existing_folder(ctx, param, p) for p in paths),
                                  help=f"Also write the document as {_FORMAT_NAMES[f]} to FILE (repeatable).")(packed)
        return packed
    return decorate


# Formats a collector may read at any moment (node_exporter's textfile collector): each file is
# replaced whole, never seen half written, readable by the collector's own user (the metrics hold
# verdicts, versions and main classes, which `ps` shows every user anyway). Every other file is 0600.
_REPLACED_WHOLE = {"openmetrics": 0o644}


def _write(path: Path, text: str, wrote: str, failed: str, quiet: bool, whole: int | None = None) -> bool:
    """``text`` written to ``path`` (``whole``: by a rename, with that mode, see trust.writer.replace_whole),
    and said (``wrote``) unless ``quiet``; a failure in one line (``failed``), False."""
    try:
        if whole is not None:
            replace_whole(Path(path), text, mode=whole)
        else:
            with open(open_for_writing(Path(path)), "w") as out:
                out.write(text)
    except OSError as e:
        say(f"{failed}: {path}: {e.strerror}")
        return False
    if not quiet:
        say(f"{wrote} {path}")
    return True


def terminal_width(wide: bool = False) -> int | None:
    """The columns a table for people is fitted to: the terminal's; None (as wide as it is) with
    ``wide`` or when stdout is a pipe or a file."""
    return None if wide or not sys.stdout.isatty() else shutil.get_terminal_size().columns


def _renderer(document: str, data, width: int | None = None) -> Callable[[str], str]:
    """``data`` rendered in a format, each format once however many outputs want it."""
    from jvmbridge.render import render

    return functools.cache(lambda output_format: render(document, output_format, data, width))


def write_exports(document: str, data, exports: Sequence[tuple[str, Path]], quiet: bool,
                  rendered: Callable[[str], str] | None = None) -> bool:
    """Each export written, and where said unless ``quiet``; False when one failed (said in one line)."""
    rendered = rendered or _renderer(document, data)
    written = [_write(path, rendered(output_format), f"{output_format} written to",
                      f"the {output_format} export was not written", quiet, _REPLACED_WHOLE.get(output_format))
               for output_format, path in exports]
    return all(written)


def print_document(document: str, output_format: str, data, output: Path | None, quiet: bool,
                   exports: Sequence[tuple[str, Path]] = (), width: int | None = None) -> bool:
    """``data`` printed as ``output_format`` (a table fitted to ``width``, see terminal_width); with
    ``output``, saved as JSON too, and each export written, where said unless ``quiet``. False when
    a save failed (said in one line): the caller exits non-zero."""
    rendered = _renderer(document, data, width)
    click.echo(rendered(output_format), nl=False)
    saved = output is None or _write(output, rendered("json"), "document saved to",
                                     "the document above was not saved", quiet)
    return write_exports(document, data, exports, quiet, rendered) and saved


def say_where_saved(error: str | None, path, quiet: bool) -> None:
    """On stderr, why a run's results were not saved, or (unless ``quiet``) the file they were saved to."""
    if error:
        say(f"the results above were not saved: {error}")
    elif not quiet:
        say(f"results saved to {path}")


java_option = click.option(
    "--java", "java_paths", multiple=True, metavar="PATH", type=JavaPath(),
    help="A java binary or JAVA_HOME; repeatable. Default: JAVA_HOME, then java on PATH.")

def _classpath(entries) -> tuple[str, ...]:
    try:
        return classpath_entries(entries)
    except UntrustedClasspath as e:
        raise click.UsageError(str(e)) from None


classpath_option = click.option("--classpath", "classpath", multiple=True, metavar="JAR",
                                callback=lambda ctx, param, entries: _classpath(entries),
                                help="Extra jar (or PATH-separated list) for the JVM, e.g. a provider's; repeatable.")

def admitted_jvm_args(words) -> tuple[str, ...]:
    """``words`` admitted as JVM options (jvm.optionfiles), or a usage error naming the one refused."""
    try:
        return tuple(admitted_options(words))
    except UntrustedOption as e:
        raise click.UsageError(str(e)) from None


def jvm_arg_option(help: str, name: str = "jvm_args"):
    """--jvm-arg, each option admitted (jvm.optionfiles) before anything runs: refused in one line."""
    return click.option("--jvm-arg", name, multiple=True, metavar="OPTION",
                        callback=lambda ctx, param, words: admitted_jvm_args(words), help=help)


# Eager: set before --jvm-arg's words are admitted.
trust_jvm_arg_option = click.option(
    TRUST_OPTION, is_flag=True, is_eager=True, expose_value=False,
    callback=lambda ctx, param, given: trust_any_jvm_arg(given),
    help="Run as root, pass on --jvm-arg options of any form (an agent, a -D property, a log file...), each file "
         "they name checked as --classpath is. Without it root takes only options that name no file.")

trust_option = click.option("--trust-jdk-owner", "trust_jdk_owner", is_flag=True,
                            help="Run as root the JDKs given with --java even where another user can change "
                                 "their files (refused otherwise: it would run that user's code as root).")

all_jdks_option = click.option("--all-jdks", is_flag=True,
                               help="Every JVM on this machine that JPype can drive (see `jvmbridge jdks`).")

def format_option(*documents: str):
    """--format, with the formats the render registry has for ``documents`` (report's: runs' and a fleet's)."""
    from jvmbridge.render import FORMATS

    formats = list(dict.fromkeys(f for document in documents for f in FORMATS[document]))
    return click.option("--format", "output_format", type=click.Choice(formats), default="table", show_default=True)


def javas_or_usage_error(java_paths, all_jdks: bool = False, trust_given: bool = False) -> list[JavaInstall]:
    """The JVMs asked for (or the default one); a bad path, or one root may not run, is a usage
    error, exit 2."""
    try:
        return find_javas(java_paths, all_jdks, trust_given)
    except JvmNotFound as e:
        raise click.UsageError(str(e)) from None


def read_fleet(paths: list):
    """The fleet report of the `check` documents at ``paths``; a file that is not one (or not a
    complete one) is a host not checked, with the reason."""
    from jvmbridge.fleet.report import fleet_of, read_documents

    return fleet_of(read_documents(paths), sources=paths)
