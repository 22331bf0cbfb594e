"""`jvmbridge flags` output: one row per flag, one value column per JVM or file."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

import pandas as pd

from jvmbridge.jvm.printflags import FlagTable
from jvmbridge.render.text import align, as_json, as_lines, csv_of_frame, markdown

# 1: sources, flags with type/name/value/kind/origin/why.
SCHEMA_VERSION = 1
EMPTY = '""'


@dataclass
class FlagsDocument:
    frame: pd.DataFrame  # tidy: one row per source and flag
    sources: list[str]  # the value columns, in order
    notes: list[str] = field(default_factory=list)


def flags_frame(tables: dict[str, FlagTable], show_all: bool, names: tuple[str, ...]) -> pd.DataFrame:
    """Tidy rows of the crypto flags (every flag with ``show_all``), or those matching ``names``."""
    rows = []
    for source, table in tables.items():
        chosen = sorted(table.flags.values(), key=lambda f: f.name) if show_all else table.crypto()
        for flag in chosen:
            if names and not any(n.lower() in flag.name.lower() for n in names):
                continue
            rows.append({"source": source, **flag.as_dict(), "why": table.why(flag)})
    return pd.DataFrame(rows, columns=["source", "type", "name", "value", "kind", "origin", "why"])


def render_table(document: FlagsDocument, width: int | None = None) -> str:
    return _render(document, functools.partial(align, width=width))


def render_markdown(document: FlagsDocument) -> str:
    return _render(document, markdown)


def _render(document: FlagsDocument, tabulate) -> str:
    notes = [f"Note: {note}" for note in document.notes]
    if document.frame.empty:
        return as_lines(["No matching flags.", *notes])
    header = ["flag", "type", "kind", *document.sources]
    body = []
    for name, group in document.frame.groupby("name", sort=True):
        by_source = {row.source: f"{row.value or EMPTY} [{row.why}]" for row in group.itertuples()}
        first = group.iloc[0]
        body.append([name, first.type, first.kind, *(by_source.get(s, "absent") for s in document.sources)])
    return as_lines([*tabulate([header, *body]), *notes])


def render_csv(document: FlagsDocument) -> str:
    return csv_of_frame(document.frame)


def render_json(document: FlagsDocument) -> str:
    return as_json({"schema_version": SCHEMA_VERSION, "flags": json.loads(document.frame.to_json(orient="records")),
                    "notes": document.notes})
