"""Figures of saved runs (matplotlib): throughput, the AES speedup, and each column against the
report's baseline. Intervals past the axis are clipped with an arrow: one noisy row squashes nothing."""
from __future__ import annotations

import io
import math
import os
import textwrap
from pathlib import Path

import pandas as pd

from jvmbridge.comparison.ratios import RatioKind, speedup
from jvmbridge.engines import name_of
from jvmbridge.host.cpu import features_text
from jvmbridge.render.text import printable
from jvmbridge.report.history import RunComparison, Versus, number_runs
from jvmbridge.trust.writer import open_for_writing

WIDTH = 16  # inches, at DPI: a PNG 1600 pixels wide
DPI = 100
LABEL_WIDTH = 34  # characters per line of a bar's label
AXIS_SPAN = 1.35  # an axis reaches this far beyond the largest figure; intervals past it are clipped
_OFF_HATCH = "//"
_RATIO_TICKS = (0.1, 0.2, 0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 5, 10)


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def plot_runs(frame: pd.DataFrame, comparison: RunComparison, path: Path) -> None:
    """Write figure_of as PNG or SVG by suffix, through trust.writer: matplotlib gets the open file,
    never the name, which it would follow through a link."""
    figure = figure_of(frame, comparison)  # drawn first: a figure that fails leaves the file as it was
    with os.fdopen(open_for_writing(path), "wb") as out:
        _save(figure, out, format=path.suffix.lower().lstrip("."))


def svg_of(frame: pd.DataFrame, comparison: RunComparison) -> str:
    """figure_of as an inline <svg> (glyphs as paths: no font, nothing loaded)."""
    out = io.StringIO()
    _save(figure_of(frame, comparison), out, format="svg")
    text = out.getvalue()
    return text[text.index("<svg"):]


def _save(figure, target, **options) -> None:
    plt = _pyplot()
    figure.savefig(target, **options)
    plt.close(figure)


def _pyplot():
    """pyplot with matplotlib's own settings alone: a matplotlibrc in the current folder may be any
    user's (figure.hooks are called, usetex runs latex), so it is imported from "/" and reset."""
    here = os.open(".", os.O_PATH | os.O_DIRECTORY)
    try:
        os.chdir("/")
        import matplotlib
    except ImportError:
        raise PlotUnavailable("figures need matplotlib: pip install \"jvmbridge[plot]\"") from None
    finally:
        os.fchdir(here)
        os.close(here)
    matplotlib.rcdefaults()
    matplotlib.rcParams.update({key: matplotlib.rcParamsDefault[key] for key in ("timezone", "date.epoch")})
    matplotlib.use("Agg")  # files only, no display needed (rcdefaults leaves the backend as it was)
    import matplotlib.pyplot as plt

    return plt


def figure_of(frame: pd.DataFrame, comparison: RunComparison):
    """The runs' figure: panels, a legend below, a caption naming machines and versions."""
    plt = _pyplot()  # first: it says so where matplotlib is not installed
    import matplotlib.patches

    frame = number_runs(frame)
    several_hosts = frame.host.nunique() > 1
    frame = frame.assign(colour_key=[name_of(r) + (f" ({r.host})" if several_hosts else "") for r in frame.itertuples()])
    keys = list(dict.fromkeys(frame.colour_key))
    palette = plt.get_cmap("tab10" if len(keys) <= 10 else "tab20")
    colours = {key: palette(i % palette.N) for i, key in enumerate(keys)}
    speedups = _speedups(frame)
    across = _across(comparison)
    panels = [lambda axis: _draw_throughput(axis, frame, colours), lambda axis: _draw_speedups(axis, speedups, colours)]
    if across:
        panels.append(lambda axis: _draw_across(axis, across, colours, comparison.baseline))
    bars = max(len(speedups), len(across), frame.colour_key.nunique() * 2)
    figure, axes = plt.subplots(1, len(panels), figsize=(WIDTH, max(5.0, 1.8 + 0.3 * bars)), dpi=DPI, squeeze=False)
    for panel, axis in zip(panels, axes[0]):
        panel(axis)

    handles = [matplotlib.patches.Patch(color=colours[key], label=_plain(key)) for key in keys]
    handles += [matplotlib.patches.Patch(facecolor="white", edgecolor="black", label="acceleration on"),
                matplotlib.patches.Patch(facecolor="white", edgecolor="black", hatch=_OFF_HATCH,
                                         label="acceleration off (hatched, dashed or hollow)")]
    height = figure.get_figheight()  # inches, as the bottom is laid out: caption, then legend, then panels
    caption, legend = 0.4, 0.25 * math.ceil(len(handles) / 4) + 0.1
    figure.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), fontsize=8, frameon=False,
                  bbox_to_anchor=(0.5, caption / height))
    figure.suptitle(_plain(f"jvmbridge: {', '.join(sorted(set(frame.cipher.astype(str))))}"))
    figure.text(0.01, 0.05 / height, _caption(frame), fontsize=7)
    figure.tight_layout(rect=(0, (caption + legend) / height, 1, 1 - 0.4 / height))
    return figure


def _draw_throughput(axis, frame: pd.DataFrame, colours: dict) -> None:
    # The newest run's point per series and size.
    newest = frame.sort_values("started_utc").drop_duplicates(["colour_key", "setting", "message_bytes"], keep="last")
    sizes = sorted(newest.message_bytes.unique())
    axis.set_title("Throughput" + (" (the newest run of each)" if frame.run.nunique() > 1 else ""))
    if len(sizes) == 1:
        _draw_throughput_bars(axis, newest, colours, sizes[0])
        return
    limit = AXIS_SPAN * newest.mb_per_s.max()
    for (key, _), group in newest.groupby(["colour_key", "setting"], sort=False):
        group = group.sort_values("message_bytes")
        low, high = _mb_per_s_interval(group)
        axis.plot(group.message_bytes, group.mb_per_s, color=colours[key], marker="o",
                  linestyle="-" if group.accelerated.iloc[0] else "--",
                  markerfacecolor=colours[key] if group.accelerated.iloc[0] else "white")
        for x, y, below, above in zip(group.message_bytes, group.mb_per_s, low, high):
            axis.plot([x, x], [max(y - below, 0), min(y + above, limit)], color=colours[key], linewidth=1)
            if y + above > limit:  # clipped at the axis' edge, and marked
                axis.plot(x, limit, marker="^", color=colours[key], markersize=5, clip_on=False)
    axis.set_ylim(0, limit)
    axis.set_xscale("log", base=2)
    axis.set_xticks(sizes, [f"{size:,}" for size in sizes], fontsize=7)
    axis.set_xlabel("message size (bytes, log scale)")
    axis.set_ylabel("MB/s (10^6 B/s of plaintext); bars: 95% interval over forks")
    axis.grid(True, which="both", alpha=0.3)


def _draw_throughput_bars(axis, newest: pd.DataFrame, colours: dict, size: int) -> None:
    """Throughput at one size: bars, not a log axis of one point."""
    ordered = newest.sort_values(["colour_key", "accelerated"], ascending=[True, False],
                                 key=lambda c: c.map(list(colours).index) if c.name == "colour_key" else c)
    labels = [_wrapped(f"{r.colour_key}, {r.setting}") for r in ordered.itertuples()]
    low, high = _mb_per_s_interval(ordered)
    _bars(axis, list(ordered.mb_per_s), low, high, labels,
          [colours[r.colour_key] for r in ordered.itertuples()], [not r.accelerated for r in ordered.itertuples()])
    axis.set_xlabel(f"MB/s (10^6 B/s of plaintext) at {size} B; bars: 95% interval over forks")


def _draw_speedups(axis, speedups: list[dict], colours: dict) -> None:
    axis.set_title("Speedup from AES instructions (on / off)")
    if not speedups:
        axis.text(0.5, 0.5, "no row measured both on and off", ha="center", transform=axis.transAxes)
        axis.set_axis_off()
        return
    _bars(axis, [s["ratio"].value for s in speedups], [s["ratio"].value - s["ratio"].low for s in speedups],
          [s["ratio"].high - s["ratio"].value for s in speedups], [_wrapped(s["label"]) for s in speedups],
          [colours[s["key"]] for s in speedups], [False] * len(speedups), reference=1.0)
    axis.set_xlabel("times faster with them (ratio of figures; bars: interval)")


def _draw_across(axis, across: list[dict], colours: dict, baseline: str) -> None:
    """Each ratio with its interval on a log axis around 1, clipped past AXIS_SPAN x the farthest."""
    axis.set_title(_plain(f"Against {baseline} (ratio of figures)"))
    positions = list(range(len(across)))[::-1]
    farthest = max([1.25 / AXIS_SPAN] + [max(a["ratio"].value, 1 / a["ratio"].value) for a in across])
    low_limit, high_limit = 1 / (AXIS_SPAN * farthest), AXIS_SPAN * farthest
    for y, each in zip(positions, across):
        ratio, colour = each["ratio"], colours.get(each["key"], "grey")
        axis.plot([max(ratio.low, low_limit), min(ratio.high, high_limit)], [y, y], color=colour, linewidth=1.5)
        axis.plot(ratio.value, y, marker="o", color=colour, markerfacecolor=colour if each["accelerated"] else "white")
        for beyond, edge, marker in ((ratio.low < low_limit, low_limit, "<"), (ratio.high > high_limit, high_limit, ">")):
            if beyond:
                axis.plot(edge, y, marker=marker, color=colour, markersize=5, clip_on=False)
    axis.set_xscale("log")
    axis.set_xlim(low_limit, high_limit)
    axis.minorticks_off()
    ticks = [t for t in _RATIO_TICKS if low_limit <= t <= high_limit]
    axis.set_xticks(ticks, [f"{t:g}x" for t in ticks], fontsize=7)
    axis.axvline(1, color="grey", linewidth=0.8)
    axis.set_yticks(positions, [_wrapped(a["label"]) for a in across], fontsize=7)
    axis.set_ylim(-0.6, len(across) - 0.4)
    axis.set_xlabel(_plain(f"times faster than {baseline} (log scale; lines: interval)"))


def _bars(axis, values: list[float], below: list[float], above: list[float], labels: list[str], colours: list,
          off: list[bool], reference: float | None = None) -> None:
    """Horizontal bars top to bottom with intervals, clipped with an arrow past the axis."""
    positions = list(range(len(values)))[::-1]
    axis.barh(positions, values, color=colours, hatch=[_OFF_HATCH if o else "" for o in off], edgecolor="black",
              linewidth=0.4)
    limit = _axis_limit(values, reference)
    for y, value, low, high in zip(positions, values, below, above):
        top = value + high if math.isfinite(high) else math.inf
        axis.plot([max(value - low, 0), min(top, limit)], [y, y], color="black", linewidth=1)
        if top > limit:
            axis.plot(limit, y, marker=">", color="black", markersize=5, clip_on=False)
    axis.set_xlim(0, limit)
    axis.set_yticks(positions, labels, fontsize=7)
    axis.set_ylim(-0.6, len(values) - 0.4)
    if reference is not None:
        axis.axvline(reference, color="grey", linewidth=0.8)


def _axis_limit(values: list[float], reference: float | None) -> float:
    """AXIS_SPAN past the largest finite figure (or the reference line)."""
    # Every figure 0 (0-byte messages): an axis to 1, not a singular one.
    return AXIS_SPAN * max([v for v in values if math.isfinite(v)] + [reference or 0]) or 1.0


def _speedups(frame: pd.DataFrame) -> list[dict]:
    """Per series measured on and off, its speedup per size (and run), by size."""
    found = []
    several_runs = frame.run.nunique() > 1
    for (size, key, run, shape), rows in frame.groupby(["message_bytes", "colour_key", "run", "shape"], sort=False):
        on, off = rows[rows.accelerated == True], rows[rows.accelerated == False]  # noqa: E712 (a column of bools)
        if len(on) and len(off):
            on, off = on.iloc[-1], off.iloc[-1]  # a repeat's latest
            found.append({"key": key, "size": size, "ratio": speedup(RatioKind.SPEEDUP, "", on, off,
                                                                     one_run=on.run_id == off.run_id),
                          "label": f"{size:,} B: {key}" + (f", {shape}" if frame["shape"].nunique() > 1 else "")
                                   + (f", {run}" if several_runs else "")})
    return sorted(found, key=lambda each: each["size"])  # stable: in run order inside a size


def _across(comparison: RunComparison) -> list[dict]:
    """Each configuration's ratio against the baseline column, where both have it."""
    found = []
    for record in comparison.table.to_dict(orient="records"):
        for column, cell in record.items():
            if isinstance(cell, Versus) and cell.ratio is not None:
                other = column.split(" vs ")[0]
                row = comparison.cells[(record["configuration"], other)]
                found.append({"ratio": cell.ratio, "key": name_of(row), "accelerated": bool(row.accelerated),
                              "label": record["configuration"] + (f" ({other})" if len(comparison.columns) > 2 else "")})
    return found


def _mb_per_s_interval(rows: pd.DataFrame) -> tuple[list[float], list[float]]:
    """How far below and above each row's MB/s its interval reaches; inf above where ns/op reaches 0."""
    error = rows.ns_per_op_error.fillna(0).astype(float)
    mean = rows.ns_per_op.astype(float)
    slowest = rows.message_bytes / (mean + error) * 1e3
    fastest = rows.message_bytes / (mean - error).where(mean > error) * 1e3  # NaN: unbounded
    return ((rows.mb_per_s - slowest).clip(lower=0).tolist(),
            (fastest - rows.mb_per_s).clip(lower=0).fillna(math.inf).tolist())


def _wrapped(label: str) -> str:
    label = _plain(label)
    return "\n".join(textwrap.wrap(label, LABEL_WIDTH, break_long_words=True)) or label


def _plain(text: str) -> str:
    """Text from hosts as the figure shows it: controls escaped, and each $ escaped (matplotlib reads
    text between two as math and stops drawing at math it cannot parse)."""
    return printable(text).replace("$", r"\$")


def _caption(frame: pd.DataFrame) -> str:
    machines = frame[["host", "cpu_model", "cpu_features"]].drop_duplicates()
    hosts = "; ".join(f"{m.host}: {m.cpu_model} [{features_text(m.cpu_features)}]" for m in machines.itertuples())
    versions = "; ".join(sorted(set(frame.implementation)))
    return f"{_plain(hosts)}\n{_plain(versions)}"
