"""Progress on a terminal while a command runs: lines redrawn in place (rich's Live), the document
alone on stdout. Only when stderr is a terminal and not --quiet; NO_COLOR is rich's to respect.
The display is transient: when the command ends it is gone, and what stays is the document.

CompareProgress shows each running configuration (forks, figure and interval so far, its time),
or for a job that runs its configurations in the same forks (the conductor's) where its forks stand
and its ratios so far, and the run's time so far and left. StepProgress numbers verify's and
check's steps and times them.
"""
from __future__ import annotations

import math
import sys
import time
from contextlib import AbstractContextManager

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from jvmbridge.render.text import printable
from jvmbridge.sampling.progress import PartSoFar, RatioSoFar, Update

# Finished configurations still shown above the running one: enough to see the run move.
_FINISHED_SHOWN = 3


def wanted(quiet: bool) -> bool:
    """Progress goes to stderr when it is a terminal and the user did not ask for quiet."""
    return not quiet and sys.stderr.isatty()


def duration(seconds: float) -> str:
    """42 s, 3 min 05 s."""
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def so_far(figure_ns: float | None, relative_error: float) -> str:
    """A configuration's figure so far: "52.1 ns/op ±1.2%", "52.1 ns/op" before an interval, ""."""
    if figure_ns is None:
        return ""
    return f"{figure_ns:,.1f} ns/op" + (f" ±{relative_error:.1%}" if math.isfinite(relative_error) else "")


def ratio_so_far(ratio: RatioSoFar) -> str:
    """"6.20x ±1.6%", "6.20x" before an interval."""
    return f"{ratio.times:.2f}x" + (f" ±{ratio.relative_error:.1%}" if math.isfinite(ratio.relative_error) else "")


def fork_of(part: PartSoFar) -> str:
    """"fork 3 of 5": the fork running (the last one, once all have finished)."""
    return f"fork {min(part.forks + 1, part.planned)} of {part.planned}"


def paired_job_lines(lead: str, label: str, part: PartSoFar, ratios: tuple[RatioSoFar, ...]) -> list[Line]:
    """A job whose parts run in the same forks (the conductor's): one line for where the forks stand,
    then each ratio over the forks finished, its figure first (a long label gives way, not the figure)."""
    return [(lead, label, fork_of(part)),
            *((f"      {ratio_so_far(r):>13}", r.label, "") for r in ratios)]


# A line of the display: (what leads it, a label, what follows it). Too wide for the terminal, the
# label gives way in its middle ("…"): the counts and times are what a person watches, and a label's
# start says what it is while its end says which of its kind (the setting, the shape).
Line = tuple[str, str, str]


class _Display(AbstractContextManager):
    """A transient rich Live on stderr, redrawn four times a second from ``lines`` (which rich
    calls from the start: subclasses set their state before this __init__)."""

    def __init__(self) -> None:
        self._console = Console(stderr=True)
        self._live = Live(console=self._console, transient=True, refresh_per_second=4,
                          get_renderable=lambda: Group(*(Text(fitted(line, self._console.width), no_wrap=True,
                                                              overflow="ellipsis") for line in self.lines())))

    def lines(self) -> list[Line]:
        raise NotImplementedError

    def __enter__(self):
        self._live.start()
        return self

    def __exit__(self, *exc) -> None:
        self._live.stop()


def fitted(line: Line, width: int) -> str:
    """The line in ``width`` columns, its label shortened where it must be; escaped as printable()
    writes it, first (rich passes most controls on, and a label names a JDK by its release file)."""
    lead, label, tail = (printable(part) for part in line)
    room = width - len(lead) - len(tail) - 4
    if len(label) > room:
        keep = max(0, room - 1)
        label = label[:(keep + 1) // 2] + "…" + label[len(label) - keep // 2:]
    return lead + (f" {label}" if label else "") + (f" · {tail}" if tail else "")


class CompareProgress(_Display):
    """compare's display; called with each Update the runner sends."""

    def __init__(self) -> None:
        self._update: Update | None = None
        self._at = time.monotonic()  # when the latest update came: the clocks run on from it
        self._finished: list[Line] = []
        super().__init__()

    def __call__(self, update: Update) -> None:
        if update.finished:
            figures = "; ".join(filter(None, (so_far(p.figure_ns, p.relative_error) for _, p in update.parts)))
            forks = max((p.forks for _, p in update.parts), default=0)
            self._finished.append((f"✓ [{update.job + 1}/{update.jobs}] {duration(update.job_elapsed):>4}",
                                   update.label, " · ".join(filter(None, (f"{forks} fork(s)" if forks else "", figures)))))
        self._update, self._at = update, time.monotonic()

    def lines(self) -> list[Line]:
        update = self._update
        if update is None:
            return []
        ran = time.monotonic() - self._at
        lines = self._finished[-_FINISHED_SHOWN:]
        if not update.finished:
            lead = f"  [{update.job + 1}/{update.jobs}] {duration(update.job_elapsed + ran):>4}"
            if not update.parts:
                lines.append((lead, update.label, "starting"))
            else:  # every part in the same fork (the conductor's): the job's line, then its ratios
                lines += paired_job_lines(lead, update.label, update.parts[0][1], update.ratios or ())
        left = max(0.0, update.seconds_left - ran)
        lines.append((f"  {duration(update.elapsed + ran)} so far, about {duration(left)} left", "", ""))
        return lines


class StepProgress(_Display):
    """verify's and check's display; called with each step's description as it begins. ``steps``:
    how many are planned, where known (a step found wrong adds its reproduction)."""

    def __init__(self, steps: int | None = None) -> None:
        self._steps, self._started = steps, time.monotonic()
        self._done: list[tuple[str, float]] = []  # (description, seconds) of each finished step
        self._current: tuple[str, float] | None = None  # (description, when it began)
        super().__init__()

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if self._current:
            self._done.append((self._current[0], now - self._current[1]))
        self._current = (text, now)

    def lines(self) -> list[Line]:
        now = time.monotonic()
        count = len(self._done) + (self._current is not None)
        total = f"/{self._steps}" if self._steps and count <= self._steps else ""
        lines = [(f"✓ [{number}{total}] {duration(seconds):>4}", text, "")
                 for number, (text, seconds) in enumerate(self._done, 1)]
        if self._current:
            lines.append((f"  [{count}{total}] {duration(now - self._current[1]):>4}", self._current[0], ""))
        lines.append((f"  {duration(now - self._started)} so far", "", ""))
        return lines
