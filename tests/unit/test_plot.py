"""report's figure (render.plot.figure_of), read back from the matplotlib objects it draws: one colour
per engine in every panel, whole labels, the legend clear of the panels, an interval that would
stretch an axis clipped and marked, bars for one size, the runs against the baseline drawn.
Runs come from the real runner on fake engines (tests/helpers.py)."""
from __future__ import annotations

import warnings

import pytest
from helpers import FakeEngine

from jvmbridge.comparison.runner import plan, run
from jvmbridge.engines import ENGINES, Matrix
from jvmbridge.render.plot import AXIS_SPAN, figure_of, svg_of
from jvmbridge.report.history import compare_runs, tidy_frame
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import combinations
from jvmbridge.saved.store import read

matplotlib = pytest.importorskip("matplotlib", reason="needs matplotlib: pip install '.[plot]'")


def _runs(tmp_path, monkeypatch, sizes, count=2, noise=0.001, host_name=None):
    """``count`` runs of a fast engine (its slices and forks spread by ``noise``) and a slow one (slowdown 1.5)."""
    monkeypatch.setitem(ENGINES, "quick", FakeEngine("quick", 50.0, noise=noise, fork_noise=noise))
    monkeypatch.setitem(ENGINES, "noisy", FakeEngine("noisy", 500.0, slowdown=1.5, noise=0.001))
    paths = []
    for number in range(count):
        paths.append(tmp_path / f"run{number}.jsonl")
        run(plan(combinations([(128, "cbc")], ["encrypt"], sizes, ["message"], Sampling(rounds=4, forks=3)),
                 Matrix(engines=("quick", "noisy"))), output=paths[-1], host_name=host_name)
    frame = tidy_frame(read(paths))
    return frame, compare_runs(frame, "run")


def _bar_colours(axis) -> dict[str, set]:
    """Each bar's tick label (its first line's engine) -> the colours its bars were drawn in."""
    labels = [tick.get_text() for tick in axis.get_yticklabels()]
    found: dict[str, set] = {}
    for patch, y in zip(axis.patches, [patch.get_y() + patch.get_height() / 2 for patch in axis.patches]):
        label = labels[len(labels) - 1 - round(y)].replace("\n", " ")
        engine = "fake quick" if "fake quick" in label else "fake noisy"
        found.setdefault(engine, set()).add(patch.get_facecolor()[:3])
    return found


def test_each_engine_one_colour_in_every_panel_whole_labels_and_the_legend_clear_of_them(tmp_path, monkeypatch):
    frame, comparison = _runs(tmp_path, monkeypatch, [16, 1024])
    figure = figure_of(frame, comparison)
    throughput, speedups, across = figure.axes
    assert [a.get_title().split(" (")[0] for a in figure.axes] == ["Throughput", "Speedup from AES instructions",
                                                                   "Against run 1"]
    assert throughput.get_xscale() == "log"  # several sizes: a size axis
    colours = {line.get_color() for line in throughput.get_lines() if line.get_marker() == "o"}
    in_speedups = _bar_colours(speedups)
    assert len(in_speedups["fake quick"]) == len(in_speedups["fake noisy"]) == 1  # one colour per engine
    assert {matplotlib.colors.to_rgb(c) for c in colours} == {*in_speedups["fake quick"], *in_speedups["fake noisy"]}
    point_colours = {matplotlib.colors.to_rgb(line.get_color()) for line in across.get_lines()
                     if line.get_marker() == "o"}
    assert point_colours == {*in_speedups["fake quick"], *in_speedups["fake noisy"]}
    # Whole labels: wrapped, never cut; the speedups grouped by size (16 B first).
    speedup_labels = [tick.get_text().replace("\n", " ") for tick in speedups.get_yticklabels()]
    assert not any("…" in label for axis in figure.axes for label in map(str, axis.get_yticklabels()))
    assert [label.split(":")[0] for label in speedup_labels] == ["16 B"] * 4 + ["1,024 B"] * 4
    across_labels = [tick.get_text().replace("\n", "").replace(" ", "") for tick in across.get_yticklabels()]
    assert across_labels == [c.replace(" ", "") for c in comparison.table.configuration]
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legend = figure.legends[0].get_window_extent(renderer)
    assert not any(legend.overlaps(axis.get_window_extent(renderer)) for axis in figure.axes)


def test_one_size_gets_bars_and_a_wide_interval_is_clipped_and_marked(tmp_path, monkeypatch):
    frame, comparison = _runs(tmp_path, monkeypatch, [38], count=1, noise=0.4)
    figure = figure_of(frame, comparison)
    assert len(figure.axes) == 2  # one run: nothing to set against a baseline
    throughput, speedups = figure.axes
    assert throughput.get_xscale() == "linear" and "at 38 B" in throughput.get_xlabel()
    assert len(throughput.patches) == 4  # two engines, on and off
    for axis in (throughput, speedups):
        widest = max(patch.get_width() for patch in axis.patches)
        assert axis.get_xlim()[1] == pytest.approx(AXIS_SPAN * max(widest, 1 if axis is speedups else 0))
    fastest = frame[frame.engine == "fake quick"]
    assert (fastest.ns_per_op_error / fastest.ns_per_op > 0.3).any()  # an interval past the axis's edge
    marks = [line for line in speedups.get_lines() + throughput.get_lines() if line.get_marker() == ">"]
    assert marks and all(line.get_xdata()[0] == pytest.approx(line.axes.get_xlim()[1]) for line in marks)


def test_text_from_hosts_is_drawn_as_it_reads_neither_as_controls_nor_as_math(tmp_path, monkeypatch):
    # matplotlib reads text between two $ as math and stops drawing at math it cannot parse ("$^$").
    frame, comparison = _runs(tmp_path, monkeypatch, [16], host_name="web$^$1\x1b[2J")
    assert "<svg" in svg_of(frame, comparison)
    caption = figure_of(frame, comparison).texts[-1].get_text()
    assert caption.startswith(r"web\$^\$1\x1b[2J: ") and "\x1b" not in caption


def test_zero_byte_messages_draw_an_axis_of_their_own(tmp_path, monkeypatch):
    # 0-byte messages carry no MB/s: every bar 0, and the axis must not collapse to 0..0.
    frame, comparison = _runs(tmp_path, monkeypatch, [0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns of a singular axis, then widens it at will
        throughput = figure_of(frame, comparison).axes[0]
    assert throughput.get_xlim() == (0, 1.0)


def test_a_speedup_of_paired_slices_is_drawn_with_its_paired_interval_only_inside_one_run():
    import pandas as pd

    from jvmbridge.render.plot import _speedups

    def row(accelerated: bool, fork_ns: list[float], run_id: str) -> dict:
        slices = [(ns, fork) for fork, ns in enumerate(fork_ns) for _ in range(4)]  # four slices a fork
        return {"message_bytes": 16, "colour_key": "C loop", "run": "nightly", "shape": "message",
                "accelerated": accelerated, "ns_per_op": sum(fork_ns) / len(fork_ns), "ns_per_op_error": 30.0,
                "fork_ns_per_op": fork_ns, "in_turns": "every configuration at once", "interleaved": True,
                "round_ns_per_op": [ns for ns, _ in slices], "round_iterations": [1000] * len(slices),
                "round_counters": [{}] * len(slices), "round_fork": [fork for _, fork in slices],
                "run_id": run_id, "ciphertext_ok": True, "first_stage": 0}

    on, off = row(True, [100, 110, 100, 110], "a"), row(False, [250, 275, 250, 275], "a")
    [paired] = _speedups(pd.DataFrame([on, off]))
    assert paired["ratio"].turns == 4 and paired["ratio"].low == pytest.approx(2.5)  # the host moved both alike
    [unpaired] = _speedups(pd.DataFrame([on, {**off, "run_id": "b"}]))  # two runs under one name
    assert unpaired["ratio"].turns == 0 and unpaired["ratio"].low < 2.2


def test_a_matplotlibrc_in_the_current_folder_is_not_read(tmp_path):
    """matplotlib reads ./matplotlibrc first: a user's file in a folder root runs `report --plot` from
    coloured root's figure, and its figure.hooks are callables pyplot calls (here print)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "matplotlibrc").write_text("figure.facecolor: red\nfigure.hooks: builtins:print\n")
    drawing = ("from jvmbridge.render.plot import _pyplot\n"
               "print('facecolor', _pyplot().figure().get_facecolor())\n")
    done = subprocess.run([sys.executable, "-c", drawing], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})  # this tree's jvmbridge
    assert done.stdout == "facecolor (1.0, 1.0, 1.0, 1.0)\n", done.stdout + done.stderr
