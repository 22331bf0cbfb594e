"""Metrics as Prometheus reads them, valid as both its text format 0.0.4 and OpenMetrics 1.0: gauges
only, no timestamps, help texts free of characters the two escape differently."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from jvmbridge.render.text import printable

_NAME = re.compile(r"jvmbridge_[a-z0-9_]*[a-z0-9]")
_LABEL = re.compile(r"[a-z][a-z0-9_]*")
# A host's label value longer than any real one is cut, so no host can bloat every series.
MAX_LABEL_CHARS = 1024

@dataclass
class Gauge:
    """One family: ``name`` (jvmbridge_ plus its base unit), ``help`` for people."""
    name: str
    help: str
    samples: dict[str, float] = field(default_factory=dict)  # the labels as written -> the value

    def __post_init__(self):
        assert _NAME.fullmatch(self.name), self.name
        assert not re.search(r'[\\"\n]', self.help), self.help  # escaped differently by the two formats

    def set(self, value: float, **labels: str) -> None:
        """A sample; the first of two with the same labels is kept (a scrape refuses duplicates)."""
        assert all(_LABEL.fullmatch(name) for name in labels), labels
        self.samples.setdefault(_labels(labels), value)

    def states(self, current: str, states: tuple[str, ...], **labels: str) -> None:
        """A state set: 1 for ``current``, 0 for the other ``states``."""
        for state in states:
            self.set(1 if state == current else 0, **labels, state=state)


def label_value(value: object) -> str:
    """``value`` as a quoted label value, controls and non-UTF-8 escaped printably."""
    text = printable(str(value))
    if len(text) > MAX_LABEL_CHARS:
        text = text[:MAX_LABEL_CHARS - 1] + "…"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(int(value)) if float(value).is_integer() else repr(float(value))


def _labels(labels: dict[str, str]) -> str:
    """``{a="x",b="y"}`` ("" without labels); empty values left out (absence to Prometheus)."""
    shown = ",".join(f'{key}="{label_value(text)}"' for key, text in labels.items() if text != "")
    return f"{{{shown}}}" if shown else ""


def exposition(families: list[Gauge]) -> str:
    """Each family with samples as # HELP, # TYPE and samples; then # EOF."""
    lines = []
    for family in families:
        if family.samples:
            lines += [f"# HELP {family.name} {family.help}", f"# TYPE {family.name} gauge"]
            lines += [f"{family.name}{labels} {_number(value)}" for labels, value in family.samples.items()]
    return "".join(line + "\n" for line in [*lines, "# EOF"])
