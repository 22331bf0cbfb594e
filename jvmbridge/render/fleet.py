"""A fleet report: every host's verdicts in one table, the reason and fix where not active."""
from __future__ import annotations

from dataclasses import asdict

from jvmbridge.fleet.report import Fleet
from jvmbridge.intrinsics.verdict import Status
from jvmbridge.render.html import page
from jvmbridge.render.metrics import fleet_metrics
from jvmbridge.render.text import align, as_json, as_lines, csv_text, markdown

_HEADER = ["host", "JDK or JVM", "mode", "verdict", "reason", "fix"]


def _header(fleet: Fleet) -> list[str]:
    """The columns; "guard" where a running JVM was checked."""
    return _HEADER + (["guard"] if _guarded(fleet) else [])


def _guarded(fleet: Fleet) -> bool:
    return any(r.guard for r in fleet.rows)


def _cells(fleet: Fleet) -> list[list[str]]:
    extra = [""] if _guarded(fleet) else []
    cells = [[r.host, r.jvm, r.mode, r.status, "" if r.active else r.reason, r.fix, *([r.guard] if extra else [])]
             for r in fleet.rows]
    cells += [[host, "-", "-", "nothing to check", "no JDK or running JVM found", "", *extra] for host in fleet.without_jvms]
    return cells + [[host, "-", "-", "not checked", why, "", *extra] for host, why in sorted(fleet.unchecked.items())]


def render_table(fleet: Fleet, width: int | None = None) -> str:
    return as_lines(align([_header(fleet), *_cells(fleet)], width=width) + ["", fleet.summary()])


def render_markdown(fleet: Fleet) -> str:
    return as_lines(markdown([_header(fleet), *_cells(fleet)]) + ["", fleet.summary()])


def render_csv(fleet: Fleet) -> str:
    return csv_text([_header(fleet), *_cells(fleet)])


def render_json(fleet: Fleet) -> str:
    return as_json({"summary": fleet.summary(), "exit_code": fleet.exit_code, "hosts": fleet.hosts,
                    "rows": [asdict(r) for r in fleet.rows], "unchecked": fleet.unchecked})


def render_openmetrics(fleet: Fleet) -> str:
    return fleet_metrics(fleet)


# Verdict colours: good, off (a fix says how), wrong, unknown.
_KINDS = {Status.ACTIVE: "good", Status.IN_USE: "good", Status.VERIFIED: "good", Status.NOT_IN_USE: "good",
          Status.WRONG: "wrong", Status.DISABLED: "off", Status.NOT_USABLE: "off", Status.UNSUPPORTED: "off",
          Status.NOT_OBSERVED: "unknown", Status.UNKNOWN: "unknown"}


def render_html(fleet: Fleet) -> str:
    """A page: summary, counts per verdict, each row coloured by its verdict."""
    kinds = [_KINDS[r.status] for r in fleet.rows] + ["unknown"] * (len(fleet.without_jvms) + len(fleet.unchecked))
    cells = _cells(fleet)
    counts = [(kind, label, kinds.count(kind)) for kind, label in
              (("good", "active"), ("off", "not active"), ("wrong", "WRONG bytes"), ("unknown", "could not tell"))]
    hosts = len(fleet.hosts)
    return page("fleet.html", f"jvmbridge fleet: {hosts} host{'s' if hosts != 1 else ''}", summary=fleet.summary(),
                counts=counts, header=_header(fleet), rows=list(zip(kinds, cells)))
