"""Metrics as Prometheus reads them: gauge families with # HELP and # TYPE, label values escaped,
ended by # EOF. The text is both the Prometheus text format (0.0.4, what node_exporter's textfile
collector and a scrape read) and OpenMetrics 1.0: only gauges, no timestamps (the textfile
collector refuses them), help texts without the characters the two escape differently."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from jvmbridge.render.text import printable

_NAME = re.compile(r"jvmbridge_[a-z0-9_]*[a-z0-9]")
_LABEL = re.compile(r"[a-z][a-z0-9_]*")
# A label value is shown by Prometheus's pages, Grafana and terminals; one from a host (its name, a
# path, a command line) longer than any real one is cut, so no host can bloat every series.
MAX_LABEL_CHARS = 1024

@dataclass
class Gauge:
    """One family: ``name`` (jvmbridge_ and its base unit, e.g. _seconds), ``help`` for people."""
    name: str
    help: str
    samples: dict[str, float] = field(default_factory=dict)  # the labels as written -> the value

    def __post_init__(self):
        assert _NAME.fullmatch(self.name), self.name
        assert not re.search(r'[\\"\n]', self.help), self.help  # escaped differently by the two formats

    def set(self, value: float, **labels: str) -> None:
        """A sample; the first of two with the same labels is kept (a JVM asked for twice, by --pid
        and by --all-jvms, is one series: a scrape refuses duplicates)."""
        assert all(_LABEL.fullmatch(name) for name in labels), labels
        self.samples.setdefault(_labels(labels), value)

    def states(self, current: str, states: tuple[str, ...], **labels: str) -> None:
        """A state set: one sample per state, 1 for ``current`` and 0 for the others, so an alert
        can ask for a state's 1 and a dashboard can count each state."""
        for state in states:
            self.set(1 if state == current else 0, **labels, state=state)


def label_value(value: object) -> str:
    """``value`` as a label value between quotes: control characters written as escapes (printable),
    text that is not UTF-8 (a path's bytes) escaped too, then the format's own three escapes."""
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
    """``{a="x",b="y"}`` ("" without labels); as written, so two values that read the same once cut
    or escaped are one series. An empty value is the label's absence to Prometheus: left out."""
    shown = ",".join(f'{key}="{label_value(text)}"' for key, text in labels.items() if text != "")
    return f"{{{shown}}}" if shown else ""


def exposition(families: list[Gauge]) -> str:
    """The families that have samples, each as # HELP, # TYPE and its samples; then # EOF."""
    lines = []
    for family in families:
        if family.samples:
            lines += [f"# HELP {family.name} {family.help}", f"# TYPE {family.name} gauge"]
            lines += [f"{family.name}{labels} {_number(value)}" for labels, value in family.samples.items()]
    return "".join(line + "\n" for line in [*lines, "# EOF"])
