"""Every document jvmbridge prints, in every format it offers: one registry.

A document is what a command produces (a compare run, a flag listing, a check or verify
document, the JDKs found, saved runs side by side); each has a module here with one
`render_<format>(document) -> str` per format listed below. A command's --format choices come
from this table, so a format added for one document never changes another's. Beside them:
text.py (tables, and text made safe to print), html.py (the page), plot.py (report's figure),
metrics.py and exposition.py (metrics for Prometheus).
"""
from __future__ import annotations

import importlib

from jvmbridge.render.text import fence_prose, printable

FORMATS: dict[str, tuple[str, ...]] = {
    "compare": ("table", "markdown", "csv", "json", "jmh"),
    "flags": ("table", "markdown", "csv", "json"),
    "check": ("table", "markdown", "csv", "json", "openmetrics"),
    "verify": ("table", "markdown", "csv", "json"),
    "jdks": ("table", "markdown", "csv", "json"),
    "runs": ("table", "markdown", "csv", "json", "jmh", "html"),
    "fleet": ("table", "markdown", "csv", "json", "html", "openmetrics"),
}


def render(document: str, output_format: str, data, width: int | None = None) -> str:
    """``data`` (the document's own type) as text in ``output_format``, newline-terminated; a table
    for people fitted to ``width`` columns (a terminal's; None: as wide as it is)."""
    if output_format not in FORMATS[document]:
        raise ValueError(f"{document} has no {output_format} format; it has {', '.join(FORMATS[document])}")
    module = importlib.import_module(f"jvmbridge.render.{document}")
    text = (module.render_table(data, width) if output_format == "table"
            else getattr(module, f"render_{output_format}")(data))
    # For people, every control character is shown escaped (cells also escape their newlines); JSON
    # escapes them itself, and each CSV renderer writes its cells with text.csv_cell (escaped too,
    # and never a spreadsheet formula).
    if output_format == "markdown":
        return fence_prose(printable(text, lines=True))
    return printable(text, lines=True) if output_format == "table" else text
