"""`jvmbridge flags`: the crypto intrinsic flags a JVM has, their values, and where each came from."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from jvmbridge.cli.common import (
    DOCUMENT_AS_JSON,
    admitted_jvm_args,
    all_jdks_option,
    export_options,
    format_option,
    java_option,
    javas_or_usage_error,
    jvm_arg_option,
    output_option,
    print_document,
    quiet_option,
    terminal_width,
    trust_jvm_arg_option,
    trust_option,
)
from jvmbridge.forks.parent import WorkerError
from jvmbridge.jvm.printflags import MAX_TEXT_BYTES, FlagsParseError, FlagTable, parse
from jvmbridge.trust.bounded import NotAFile, TooLarge, read_at_most, read_regular_file


@click.command()
@java_option
@trust_option
@all_jdks_option
@jvm_arg_option("Read the flags as the JVMs run with this option, e.g. --jvm-arg=-XX:-UseAES; repeatable.")
@trust_jvm_arg_option
@click.option("--all-flags", "show_all", is_flag=True, help="Every flag, not only the crypto ones.")
@click.option("--name", "names", multiple=True, metavar="TEXT", help="Only flags whose name contains TEXT; repeatable.")
@click.option("--from", "from_files", multiple=True, type=click.Path(allow_dash=True, dir_okay=False),
              metavar="FILE", help="Parse saved PrintFlagsFinal (or jcmd VM.flags -all) text; '-' for stdin.")
@format_option("flags")
@export_options("flags")
@output_option(DOCUMENT_AS_JSON)
@quiet_option
@click.argument("jvm_options", nargs=-1, type=click.UNPROCESSED, callback=lambda ctx, param, words: admitted_jvm_args(words))
def flags(java_paths, trust_jdk_owner, all_jdks, jvm_args, show_all, names, from_files, output_format, exports, output,
          quiet, jvm_options):
    """Crypto flags of each JVM: value, kind and origin (PrintFlagsFinal, diagnostics unlocked).

    JVM options go with --jvm-arg, or after `--`: `jvmbridge flags -- -XX:-UseAES`.
    """
    from jvmbridge.jvm.flagsource import print_flags_final
    from jvmbridge.render.flags import FlagsDocument, flags_frame

    tables: dict[str, FlagTable] = {}
    try:
        for path in from_files:
            tables[path] = parse(_read_text(path), source=path)
        if not from_files or java_paths or all_jdks:
            for java in javas_or_usage_error(java_paths, all_jdks, trust_jdk_owner):
                tables[java.label] = parse(print_flags_final(java, (*jvm_args, *jvm_options)), source=java.label)
    except (FlagsParseError, WorkerError) as e:  # a JVM refusing its options is bad input too: its own words
        raise click.UsageError(str(e)) from None
    notes = [note for source, table in tables.items() for note in _notes(source, table)]
    document = FlagsDocument(frame=flags_frame(tables, show_all, names), sources=list(tables), notes=notes)
    if not print_document("flags", output_format, document, output, quiet, exports, terminal_width()):
        sys.exit(1)


def _notes(source: str, table: FlagTable) -> list[str]:
    notes = []
    if table.diagnostics_hidden:
        notes.append(f"{source}: no diagnostic flags listed: the text was made without "
                     "-XX:+UnlockDiagnosticVMOptions, so UseAESIntrinsics and the other intrinsic flags "
                     "are missing (JDK 9+ made them diagnostic)")
    if table.unparsed:
        number, text = table.unparsed[0]
        notes.append(f"{source}: {len(table.unparsed)} line(s) were not flags, first at line {number}: {text!r}")
    return notes


def _read_text(path: str) -> str:
    too_large = f"{path}: larger than {MAX_TEXT_BYTES // 2**20} MiB, not PrintFlagsFinal output"
    try:
        data = (read_at_most(sys.stdin.buffer.read, MAX_TEXT_BYTES) if path == "-"
                else read_regular_file(Path(path), MAX_TEXT_BYTES))  # a FIFO or /dev/zero refused unread
    except OSError as e:
        raise click.UsageError(f"{path}: {e.strerror}") from None
    except NotAFile as e:
        raise click.UsageError(f"{path}: {e}") from None
    except TooLarge:
        raise click.UsageError(too_large) from None
    if len(data) > MAX_TEXT_BYTES:
        raise click.UsageError(too_large)
    return data.decode("utf-8", errors="replace")
