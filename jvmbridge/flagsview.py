"""`jvmbridge flags` output: one row per flag, one value column per JVM or file."""
from __future__ import annotations

import json

import pandas as pd

from jvmbridge.jvm.printflags import FlagTable
from jvmbridge.textable import align

# 1: first format (sources, flags with type/name/value/kind/origin/why).
SCHEMA_VERSION = 1
EMPTY = '""'


def flags_frame(tables: dict[str, FlagTable], show_all: bool, names: tuple[str, ...]) -> pd.DataFrame:
    """Tidy rows (source, flag fields, why) of the crypto flags, or of every flag with ``show_all``;
    ``names`` keeps flags whose name contains any of them (case-insensitive)."""
    rows = []
    for source, table in tables.items():
        chosen = sorted(table.flags.values(), key=lambda f: f.name) if show_all else table.crypto()
        for flag in chosen:
            if names and not any(n.lower() in flag.name.lower() for n in names):
                continue
            rows.append({"source": source, **flag.as_dict(), "why": table.why(flag)})
    return pd.DataFrame(rows, columns=["source", "type", "name", "value", "kind", "origin", "why"])


def render_table(frame: pd.DataFrame, sources: list[str]) -> str:
    if frame.empty:
        return "No matching flags.\n"
    header = ["flag", "type", "kind", *sources]
    body = []
    for name, group in frame.groupby("name", sort=True):
        by_source = {row.source: f"{row.value or EMPTY} [{row.why}]" for row in group.itertuples()}
        first = group.iloc[0]
        body.append([name, first.type, first.kind, *(by_source.get(s, "absent") for s in sources)])
    return "\n".join(align([header, *body])) + "\n"


def render_json(frame: pd.DataFrame, notes: list[str]) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "flags": json.loads(frame.to_json(orient="records")),
                       "notes": notes}, indent=2) + "\n"
