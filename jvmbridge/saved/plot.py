"""Figures of saved runs: throughput against message size, and the speedup ratios (matplotlib)."""
from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from jvmbridge.cpu import features_text
from jvmbridge.saved.history import configuration, number_runs
from jvmbridge.comparison.ratios import RatioKind, ratios

SIZE = (12, 5.5)  # inches
DPI = 100  # so a PNG is 1200 x 550 pixels


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def plot_runs(frame: pd.DataFrame, path: Path) -> None:
    """Write a PNG or SVG (by ``path``'s suffix) with two panels and a caption naming the machines."""
    _draw(frame, path)


def svg_of(frame: pd.DataFrame) -> str:
    """The same figure as an <svg> element, for a page to hold inline (glyphs drawn as paths: it
    needs no font and loads nothing)."""
    out = io.StringIO()
    _draw(frame, out, format="svg")
    text = out.getvalue()
    return text[text.index("<svg"):]


def _draw(frame: pd.DataFrame, target, **save) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable("figures need matplotlib: pip install \"jvmbridge[plot]\"") from None
    frame = number_runs(frame)
    several_hosts = frame.host.nunique() > 1
    figure, (sizes, speedups) = plt.subplots(1, 2, figsize=SIZE, dpi=DPI)
    series = frame.assign(series=[configuration(r, with_size=False) + (f" ({r.host})" if several_hosts else "")
                                  for r in frame.itertuples()])
    # One point per series and size: the newest run's, where several measured the same thing.
    series = series.sort_values("started_utc").drop_duplicates(["series", "message_bytes"], keep="last")
    for label, group in series.groupby("series", sort=False):
        group = group.sort_values("message_bytes")
        sizes.errorbar(group.message_bytes, group.mb_per_s, yerr=_mb_per_s_interval(group), marker="o", capsize=3,
                       label=label)
    sizes.set_xscale("log", base=2)
    sizes.set_xlabel("message size (bytes, log scale)")
    sizes.set_ylabel("throughput (MB/s = 10^6 B/s of plaintext; bars: 95% interval over forks)")
    sizes.set_title("Throughput by message size")
    sizes.legend(fontsize=7, loc="best")
    sizes.grid(True, which="both", alpha=0.3)

    several_runs = frame.run.nunique() > 1
    bars = [(f"{ratio.label}\n{run}, {group.message_bytes.iloc[0]} B" if several_runs else ratio.label, ratio)
            for run, group in frame.groupby("run", sort=False)
            for ratio in ratios(group.reset_index(drop=True)) if ratio.kind is RatioKind.SPEEDUP]
    for y, (_, ratio) in enumerate(bars):
        speedups.barh(y, ratio.value, xerr=[[ratio.value - ratio.low], [ratio.high - ratio.value]], capsize=3)
    speedups.set_yticks(range(len(bars)), [_short(label) for label, _ in bars], fontsize=7)
    speedups.set_xlabel("times faster (ratio of figures; bars: interval)")
    speedups.set_title("Speedup from AES instructions")
    speedups.axvline(1, color="grey", linewidth=0.8)

    figure.suptitle(f"jvmbridge: {', '.join(sorted(set(frame.cipher.astype(str))))}")
    figure.text(0.01, 0.01, _caption(frame), fontsize=7, wrap=True)
    figure.tight_layout(rect=(0, 0.06, 1, 0.95))
    figure.savefig(target, **save)
    plt.close(figure)


def _mb_per_s_interval(rows: pd.DataFrame) -> list:
    """How far below and above each row's MB/s (as the table shows it) its interval reaches, in
    MB/s; nothing for a row without one."""
    error = rows.ns_per_op_error.fillna(0).astype(float)
    mean = rows.ns_per_op.astype(float)
    slowest = rows.message_bytes / (mean + error) * 1e3
    fastest = rows.message_bytes / (mean - error).where(mean > error) * 1e3  # NaN: unbounded, drawn as none
    return [(rows.mb_per_s - slowest).clip(lower=0).tolist(), (fastest - rows.mb_per_s).clip(lower=0).fillna(0).tolist()]


def _short(label: str, width: int = 48) -> str:
    return "\n".join(line if len(line) <= width else line[: width - 1] + "…" for line in label.splitlines())


def _caption(frame: pd.DataFrame) -> str:
    machines = frame[["host", "cpu_model", "cpu_features"]].drop_duplicates()
    hosts = "; ".join(f"{m.host}: {m.cpu_model} [{features_text(m.cpu_features)}]" for m in machines.itertuples())
    versions = "; ".join(sorted(set(frame.implementation)))
    return f"{hosts}\n{versions}"
