"""Every document jvmbridge prints, in every format: one registry. A command's --format choices come
from a document's `render_<format>` functions, so a format added for one changes no other."""
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
    """``data`` as text in ``output_format``, newline-terminated; tables for people fit ``width``."""
    if output_format not in FORMATS[document]:
        raise ValueError(f"{document} has no {output_format} format; it has {', '.join(FORMATS[document])}")
    module = importlib.import_module(f"jvmbridge.render.{document}")
    text = (module.render_table(data, width) if output_format == "table"
            else getattr(module, f"render_{output_format}")(data))
    # For people every control character is shown escaped; JSON escapes them itself, and CSV cells
    # go through text.csv_cell (never a spreadsheet formula).
    if output_format == "markdown":
        return fence_prose(printable(text, lines=True))
    return printable(text, lines=True) if output_format == "table" else text
