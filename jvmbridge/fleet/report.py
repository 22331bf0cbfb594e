"""Many hosts' `check` documents as one fleet report: a row per host x JDK or running JVM x mode.

A host that could not be checked is a document too ({"host": ..., "unchecked": why}, written by
`jvmbridge fleet`), so a saved fleet directory reports the same later and nothing is dropped.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jvmbridge.guard.state import ModeState, summary
from jvmbridge.intrinsics.verdict import Status, Verdict, combined_exit, exit_code as verdicts_exit


class FleetFileError(ValueError):
    """A file that is not a `check` document."""


def is_check_document(path: Path) -> bool:
    """A JSON file holding one `check` document (or a fleet record of a host not checked)."""
    try:
        document = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(document, dict) and "host" in document and ("jdks" in document or "unchecked" in document)


def read_documents(paths: list[Path]) -> list[dict]:
    """The documents at ``paths``; FleetFileError naming the first that is not a `check` document
    (fleet_of names one that is incomplete)."""
    documents = []
    for path in paths:
        if not is_check_document(path):
            raise FleetFileError(f"{path}: not a `jvmbridge check --format json` document")
        documents.append(json.loads(Path(path).read_text()))
    return documents


@dataclass(frozen=True)
class FleetRow:
    host: str
    jvm: str  # "JDK 17.0.15 /usr/lib/jvm/..." or "pid 1234 java -jar app.jar"
    mode: str
    status: Status
    reason: str
    fix: str
    # For a running JVM: what its guard agent found ("guard: CTR verified 10:02"), "no guard"; "" for
    # a JDK, or a document from before guards were read.
    guard: str = ""

    @property
    def active(self) -> bool:
        return self.status.active


@dataclass
class Fleet:
    rows: list[FleetRow]
    unchecked: dict[str, str]  # host -> why it could not be checked
    hosts: list[str] = field(default_factory=list)

    @property
    def without_jvms(self) -> list[str]:
        """Hosts checked that had no JDK or running JVM to check (a row each, never left out)."""
        seen = {r.host for r in self.rows}
        return [host for host in self.hosts if host not in seen and host not in self.unchecked]

    @property
    def exit_code(self) -> int:
        """As `check`'s, over every host: 1 something not active or wrong, 2 could not tell (a
        host not checked included), 0 all active."""
        verdicts = [Verdict(r.mode, r.status, r.reason, r.fix) for r in self.rows]
        return combined_exit([*([verdicts_exit(verdicts)] if verdicts else []), *([2] if self.unchecked else [])])

    def summary(self) -> str:
        jvms = {(r.host, r.jvm) for r in self.rows}
        off = sorted({(r.host, r.jvm) for r in self.rows if not r.active and r.status != Status.WRONG})
        wrong = sorted({(r.host, r.jvm) for r in self.rows if r.status == Status.WRONG})
        parts = [f"{_count(self.hosts, 'host')}, {_count(jvms, 'JDK or JVM', 'JDKs and JVMs')} checked"]
        if wrong:
            parts.append(f"{len(wrong)} computing WRONG bytes: " + ", ".join(f"{h} {j}" for h, j in wrong))
        if off:
            parts.append(f"{len(off)} with AES acceleration not active: " + ", ".join(f"{h} {j}" for h, j in off))
        if self.unchecked:
            parts.append(f"{_count(self.unchecked, 'host')} not checked: " + ", ".join(sorted(self.unchecked)))
        if self.without_jvms:
            parts.append(f"{_count(self.without_jvms, 'host')} with no JDK or JVM found: " + ", ".join(self.without_jvms))
        if not (wrong or off or self.unchecked):
            parts.append("AES acceleration active everywhere")
        return "; ".join(parts) + "."


def fleet_of(documents: list[dict], sources: Sequence[object] = ()) -> Fleet:
    """The fleet of ``documents``; ``sources`` (the files they were read from) name a document
    that is not a complete one in the FleetFileError."""
    rows, unchecked, hosts = [], {}, []
    for index, document in enumerate(documents):
        host = str(document["host"])
        hosts.append(host)
        if "unchecked" in document:
            unchecked[host] = str(document["unchecked"])
            continue
        try:
            rows += _host_rows(host, document)
        except FleetFileError as e:
            raise FleetFileError(f"{sources[index]}: {e}" if index < len(sources) else str(e)) from None
    return Fleet(rows, unchecked, list(dict.fromkeys(hosts)))


def _host_rows(host: str, document: dict) -> list[FleetRow]:
    """A checked host's rows; FleetFileError where the document lacks what a `check` document has
    (a hand-edited file, one from another tool, or a hostile host's)."""
    rows = []
    try:
        for jdk in document.get("jdks", []):
            options = f" with {' '.join(jdk['options'])}" if jdk.get("options") else ""
            rows += _rows(host, f"JDK {jdk['version']} {jdk['java_home']}{options}", jdk)
        for live in document.get("live_jvms", []):
            command = str(live.get("command_line", ""))
            guarded = ("" if "guard" not in live else
                       summary([ModeState(s["mode"], s["status"], s["detail"]) for s in live["guard"]]) if live["guard"] else "no guard")
            rows += _rows(host, f"pid {live['pid']}" + (f" {command[:60]}" if command else ""), live, guarded)
    except KeyError as e:
        raise FleetFileError(f"{host}: not a complete `jvmbridge check` document (no {e} where one belongs)") from None
    except (TypeError, AttributeError) as e:
        raise FleetFileError(f"{host}: not a complete `jvmbridge check` document (a value of another kind: {e})"
                             ) from None
    return rows


def _rows(host: str, jvm: str, part: dict, guard: str = "") -> list[FleetRow]:
    return [FleetRow(host, jvm, v["mode"], _status(host, v["status"]), v["reason"], v.get("fix", ""), guard)
            for v in part["verdicts"]]


def _status(host: str, status: str) -> Status:
    try:
        return Status(status)
    except ValueError:  # a document from a newer jvmbridge, or one that was tampered with
        raise FleetFileError(f"{host}: a verdict this jvmbridge does not know: {status!r}") from None


def _count(things, one: str, many: str = "") -> str:
    return f"{len(things)} {one if len(things) == 1 else many or one + 's'}"
