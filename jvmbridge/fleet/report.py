"""Many hosts' `check` documents as one fleet report: a row per host x JDK or JVM x mode.

A host not checked is a document too ({"host", "unchecked"}); an incomplete or hostile document
makes its host "not checked" with the reason, and every other host is still reported.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jvmbridge.guard.state import ModeState, summary
from jvmbridge.intrinsics.verdict import Status, Verdict, combined_exit
from jvmbridge.intrinsics.verdict import exit_code as verdicts_exit
from jvmbridge.trust.bounded import NotAFile, TooLarge, read_regular_file

# Real documents are a few kB per JDK: larger came from no jvmbridge (and must not eat memory).
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
# Bytes alone do not bound memory (31 MiB of `{},` is 942 MB of dicts): values are counted on the
# bytes before parsing and capped far above a real document's few hundred per JDK.
MAX_VALUES = 500_000
MAX_ENTRIES = 5_000


class FleetFileError(ValueError):
    """A file that is not a `check` document (or not a complete one): why, in one line."""


def read_document(path: Path) -> dict:
    """The `check` document (or unchecked-host record) at ``path``; FleetFileError saying why not."""
    data = _document_bytes(path)
    try:
        document = json.loads(data)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise FleetFileError("not JSON") from None
    except RecursionError:
        raise FleetFileError("JSON nested deeper than a `check` document ever is") from None
    if not (isinstance(document, dict) and isinstance(document.get("host"), str)
            and ("jdks" in document or "unchecked" in document)):
        raise FleetFileError("not a `jvmbridge check --format json` document")
    entries = sum(len(part) for part in (document.get("jdks"), document.get("live_jvms")) if isinstance(part, list))
    if entries > MAX_ENTRIES:
        raise FleetFileError(f"too many entries: {entries:,} JDKs and JVMs, more than the {MAX_ENTRIES:,} read")
    return document


def _document_bytes(path: Path) -> bytes:
    """The regular file's bytes within MAX_DOCUMENT_BYTES and MAX_VALUES; FleetFileError else."""
    try:
        data = read_regular_file(Path(path), MAX_DOCUMENT_BYTES)
    except OSError as e:
        raise FleetFileError(f"cannot be read: {e.strerror}") from None
    except NotAFile as e:
        raise FleetFileError(str(e)) from None
    except TooLarge as e:
        raise FleetFileError(f"{e}, more than any `check` document") from None
    if data.count(b",") + data.count(b"{") + data.count(b"[") > MAX_VALUES:
        raise FleetFileError(f"too many entries: more than {MAX_VALUES:,} values, more than any `check` document; "
                             "not read")
    return data


def is_check_document(path: Path) -> bool:
    """A JSON file holding one `check` document (or an unchecked-host record)."""
    try:
        read_document(path)
    except FleetFileError:
        return False
    return True


def read_documents(paths: Sequence[Path]) -> Iterator[dict]:
    """The documents at ``paths`` one at a time; a non-`check` one becomes an unchecked-host record."""
    for path in paths:
        try:
            yield read_document(path)
        except FleetFileError as e:
            yield {"host": Path(path).stem, "unchecked": f"{path}: {e}"}


@dataclass(frozen=True)
class FleetRow:
    host: str
    jvm: str  # "JDK 17.0.15 /usr/lib/jvm/..." or "pid 1234 java -jar app.jar"
    mode: str
    status: Status
    reason: str
    fix: str
    # A running JVM's guard finding ("guard: CTR verified 10:02", "no guard"); "" for a JDK.
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
        """Hosts checked that had no JDK or running JVM (a row each)."""
        seen = {r.host for r in self.rows}
        return [host for host in self.hosts if host not in seen and host not in self.unchecked]

    @property
    def exit_code(self) -> int:
        """As `check`'s over every host: 1 not active or wrong, 2 could not tell, 0 all active."""
        verdicts = [Verdict(mode=r.mode, status=r.status, reason=r.reason, fix=r.fix) for r in self.rows]
        return combined_exit([*([verdicts_exit(verdicts)] if verdicts else []), *([2] if self.unchecked else [])])

    def summary(self) -> str:
        jvms = {(r.host, r.jvm) for r in self.rows}
        troubles = _troubles(self.rows)
        parts = [f"{_count(self.hosts, 'host')}, {_count(jvms, 'JDK or JVM', 'JDKs and JVMs')} checked", *troubles]
        if self.unchecked:
            parts.append(f"{_count(self.unchecked, 'host')} not checked: " + ", ".join(sorted(self.unchecked)))
        if self.without_jvms:
            parts.append(f"{_count(self.without_jvms, 'host')} with no JDK or JVM found: " + ", ".join(self.without_jvms))
        if not (troubles or self.unchecked):
            parts.append("AES acceleration active everywhere")
        return "; ".join(parts) + "."


def _troubles(rows: list[FleetRow]) -> list[str]:
    """The summary's parts naming the JDKs and JVMs computing WRONG bytes, then those not active."""
    wrong = sorted({(r.host, r.jvm) for r in rows if r.status == Status.WRONG})
    off = sorted({(r.host, r.jvm) for r in rows if not r.active and r.status not in (Status.WRONG, Status.NOT_IN_USE)})
    return [f"{len(jvms)} {what}: " + ", ".join(f"{h} {j}" for h, j in jvms)
            for what, jvms in (("computing WRONG bytes", wrong), ("with AES acceleration not active", off)) if jvms]


def fleet_of(documents: Iterable[dict], sources: Sequence[object] = ()) -> Fleet:
    """The fleet of ``documents``; an incomplete one makes its host not checked. A host is named by
    its file (<inventory name>.json), never by its document: its text cannot pass for another host."""
    rows, unchecked, hosts = [], {}, []
    for index, document in enumerate(documents):
        host = (Path(str(sources[index])).stem if index < len(sources) else
                document["host"] if isinstance(document.get("host"), str) else f"document {index + 1}")
        hosts.append(host)
        try:
            if "unchecked" in document:
                unchecked[host] = _text(document, "unchecked")
            else:
                rows += _host_rows(host, document)
        except FleetFileError as e:
            unchecked[host] = f"{sources[index]}: {e}" if index < len(sources) else str(e)
    return Fleet(rows=rows, unchecked=unchecked, hosts=list(dict.fromkeys(hosts)))


def _host_rows(host: str, document: dict) -> list[FleetRow]:
    """A checked host's rows; FleetFileError where the document lacks what `check` writes."""
    rows = []
    try:
        for jdk in document.get("jdks", []):
            options = f" with {' '.join(jdk['options'])}" if jdk.get("options") else ""
            rows += _rows(host, f"JDK {jdk['version']} {jdk['java_home']}{options}", jdk)
        for live in document.get("live_jvms", []):
            command = str(live.get("command_line", ""))
            guarded = ("" if "guard" not in live else
                       summary([_guard_state(s) for s in live["guard"]]) if live["guard"] else "no guard")
            rows += _rows(host, f"pid {live['pid']}" + (f" {command[:60]}" if command else ""), live, guarded)
    except KeyError as e:
        raise FleetFileError(f"not a complete `jvmbridge check` document (no {e} where one belongs)") from None
    except (TypeError, AttributeError, RecursionError) as e:
        raise FleetFileError(f"not a complete `jvmbridge check` document (a value of another kind: {e})"
                             ) from None
    return rows


def _rows(host: str, jvm: str, part: dict, guard: str = "") -> list[FleetRow]:
    return [FleetRow(host=host, jvm=jvm, mode=_text(v, "mode"), status=_status(_text(v, "status")),
                     reason=_text(v, "reason"), fix=_text(v, "fix", ""), guard=guard) for v in part["verdicts"]]


def _guard_state(state: dict) -> ModeState:
    return ModeState(mode=_text(state, "mode"), status=_text(state, "status"), detail=_text(state, "detail"))


def _text(part: dict, key: str, default: str | None = None) -> str:
    """``part[key]`` as text; FleetFileError if anything else (null, number, list)."""
    value = part[key] if default is None else part.get(key, default)
    if not isinstance(value, str):
        raise FleetFileError(f"not a complete `jvmbridge check` document ({key!r} is "
                             f"{_JSON_KINDS.get(type(value), 'not text')}, not text)")
    return value


_JSON_KINDS = {type(None): "null", bool: "true or false", int: "a number", float: "a number", list: "a list",
               dict: "an object"}


def _status(status: str) -> Status:
    try:
        return Status(status)
    except ValueError:  # a document from a newer jvmbridge, or one that was tampered with
        raise FleetFileError(f"a verdict this jvmbridge does not know: {status[:60]!r}") from None


def _count(things, one: str, many: str = "") -> str:
    return f"{len(things)} {one if len(things) == 1 else many or one + 's'}"
