"""`jvmbridge jdks` output: one row per JVM found, with whether JPype can drive it."""
from __future__ import annotations

from jvmbridge.render.text import align, as_json, as_lines, csv_text, markdown

_HEADER = ["found in", "java home", "version", "vendor", "arch", "JPype"]


def _cells(rows: list[dict]) -> list[list[str]]:
    return [_HEADER] + [[r["found_in"], r["java_home"], r["version"], r["vendor"], r["arch"],
                         "yes" if r["jpype"] else f"no: {r['why_not']}"] for r in rows]


def render_table(rows: list[dict], width: int | None = None) -> str:
    return as_lines(align(_cells(rows), width=width))


def render_markdown(rows: list[dict]) -> str:
    return as_lines(markdown(_cells(rows)))


def render_csv(rows: list[dict]) -> str:
    fields = ["found_in", "java_home", "version", "vendor", "arch", "jpype", "why_not"]
    return csv_text([fields, *([row.get(field) for field in fields] for row in rows)])


def render_json(rows: list[dict]) -> str:
    return as_json(rows)
