"""Find every `openssl speed` run in a text as people publish it (OpenSSL 1.0.2 to 3.x).

Texts copied from web pages lose line breaks, so the text is read as whitespace-separated tokens.
Traps: table figures are 1000s of B/s except under 10000 B/s (plain, speed.c's `results > 10000 &&
!mr`); -mr's +F lines are plain B/s; sizes from 100,000 glue to "bytes" ("bytes1048576"); copied code
blocks carry glued line numbers ("1openssl speed").
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Callable

_AES = re.compile(r"^aes-(128|192|256)[- ]([a-z0-9]+)$", re.IGNORECASE)
_FIGURE = r"\d+\.\d\dk?"  # one table cell: "%11.2fk", or "%11.2f" below 10000 B/s
_END = r"(?= |$)"  # a pattern must end where a token ends
_VALUE = r"(?:\"[^\"]*\"|'[^']*'|[^\s\"']\S*)"  # a shell word, quoted or not
# Longer is no count or size (and int() refuses 4,300 digits).
_INT = r"\d{1,18}"

_WORD = re.compile(r"\S+")
# Assignments before a command are read one at a time (_ASSIGNMENT): a pattern taking them with the
# command would read a run of them again from each of its words.
_COMMAND = re.compile(rf"(?:\S*[>\\/\"'&]|\d+)?(?i:openssl(?:\.exe)?)[\"']? speed{_END}")
_ASSIGNMENT = re.compile(rf"(?P<name>[A-Za-z_]\w*)=(?P<value>{_VALUE}){_END}")
_EXPORT = re.compile(rf"(?:\S*>)?(?:export |set |\$env:)(?P<name>OPENSSL_\w+) ?= ?(?P<value>{_VALUE}){_END}")
_UNSET = re.compile(rf"unset (?P<name>OPENSSL_\w+){_END}")
# "engine \"%s\" set." in 1.0.2-1.1.1, "Engine ..." from 3.0.
_ENGINE_SET = re.compile(rf"[Ee]ngine \"(?P<id>[^\"\s]+)\" set\.{_END}")
_ELAPSED = re.compile(rf"You have chosen to measure elapsed time instead of user CPU time\.{_END}")
_DOING = re.compile(rf"Doing (?P<name>\S+(?: \S+)?) (?:ops )?for (?P<planned>{_INT})s on (?P<size>{_INT}) size blocks: "
                    rf"(?P<count>{_INT}) (?P=name)'s in (?P<seconds>\d+\.\d+)s{_END}")
_MR_DT = re.compile(rf"\+DT:(?P<name>[^:]+):(?P<planned>{_INT}):(?P<size>{_INT}){_END}")
_MR_R = re.compile(rf"\+R:(?P<count>{_INT}):(?P<name>[^:]+):(?P<seconds>[\d.]+){_END}")
_MR_SIZES = re.compile(rf"(?P<got>Got: )?\+H(?P<sizes>(?::{_INT})+)(?: from (?P<child>\d+))?{_END}")
_MR_FIGURES = re.compile(rf"(?P<got>Got: )?\+F:\d+:(?P<name>[^:]+)(?P<figures>(?::[\d.]+)+)(?: from (?P<child>\d+))?{_END}")
_CHILD = re.compile(rf"Forked child (?P<child>\d+){_END}")
_VERSION = re.compile(rf"(?:version: (?P<v3>\d\S*)|(?P<v1>OpenSSL \d+\.\d+\.\d+\S*(?: \d\d? [A-Z][a-z]{{2}} \d{{4}})?)){_END}")
_CPUINFO = re.compile(rf"CPUINFO: (?P<caps>OPENSSL_\w+=\S+(?: env:\S+)?){_END}")
_TABLE_HEADER = re.compile(rf"type(?P<sizes>(?: ?{_INT} bytes)+){_END}")
# A table row: one to four name tokens, none a cell or a word that begins something else.
_NOT_A_NAME = rf"(?!(?:{_FIGURE}|type|Doing|version:|CPUINFO:|The|You|Forked|Got:|\+\S*){_END})"
_TABLE_ROW = re.compile(rf"(?P<name>(?:{_NOT_A_NAME}\S+ ){{1,4}}?)(?P<figures>{_FIGURE}(?: {_FIGURE})*){_END}")
# A public-key row: not AES, listed as skipped.
_KEY_ROW = re.compile(rf"(?P<name>rsa|dsa) ?(?P<bits>\d+) bits \d+\.\d+s \d+\.\d+s{_END}")

# Options taking a value (apps/speed.c), and algorithm names without a digit.
_VALUED = {"-evp", "-hmac", "-cmac", "-multi", "-async_jobs", "-engine", "-provider", "-provider-path",
           "-propquery", "-seconds", "-bytes", "-primes", "-misalign", "-rand", "-writerand", "-kem-algorithms",
           "-signature-algorithms"}
_PLAIN_NAMES = {"aes", "des", "rsa", "dsa", "ecdsa", "ecdh", "eddsa", "idea", "seed", "blowfish", "bf", "cast",
                "camellia", "whirlpool", "ghash", "rand", "hmac", "ffdh", "sm2", "kdf"}


class SpeedTextError(ValueError):
    """Text that is not `openssl speed` output, or a part breaking its format."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line  # None: nothing in the text looked like `openssl speed` figures


@dataclass(frozen=True)
class SpeedFigure:
    cipher: str  # normalised: aes-256-cbc
    message_bytes: int
    bytes_per_s: float
    low_level: bool  # printed as "aes-256 cbc": OpenSSL 1.x's AES_* functions, not EVP


@dataclass
class SpeedRun:
    line: int  # where the run starts in the text
    command: str | None = None  # as typed, with the environment assignments before it; no prompt or path
    environment: dict[str, str] = field(default_factory=dict)  # OPENSSL_* variables set for it
    options: dict[str, str] = field(default_factory=dict)  # "-engine" -> "qat", "-elapsed" -> ""
    version: str | None = None
    cpuinfo: str | None = None
    elapsed_notice: bool = False  # speed printed "You have chosen to measure elapsed time ..."
    engine_set: str | None = None  # the engine speed's output says it set ('Engine "qatengine" set.')
    planned_seconds: int | None = None  # "Doing ... for 3s"
    table: list[SpeedFigure] = field(default_factory=list)  # the table's or -mr's +F figures
    timed: list[SpeedFigure] = field(default_factory=list)  # from the "Doing" (-mr: +DT/+R) lines
    skipped: list[str] = field(default_factory=list)  # rows of other algorithms, by name
    children: set[str] = field(default_factory=set)  # -multi: the forked children seen
    _doing: set[tuple[str, int]] = field(default_factory=set)
    _pending_dt: tuple[str, int] | None = None

    @property
    def figures(self) -> list[SpeedFigure]:
        """The table where there is one, else what the "Doing" lines add up to."""
        return self.table or self.timed

    @property
    def processes(self) -> int | None:
        """-multi N: the figures sum N processes; None where unsaid."""
        if "-multi" in self.options and self.options["-multi"].isdigit():
            return int(self.options["-multi"])
        if self.children:
            return len(self.children)
        return 1 if self.command else None

    @property
    def began(self) -> bool:
        return bool(self.version or self.cpuinfo or self.elapsed_notice or self._doing or self.table or self.skipped)

    @property
    def engine(self) -> str | None:
        """The engine that ran: as the command asked, else as the output says."""
        return self.options.get("-engine") or self.engine_set


def parse_speed_text(text: str, source: str) -> list[SpeedRun]:
    """Every run in ``text`` showing figures, in order; SpeedTextError when none has AES figures."""
    runs = [run for run in _Reader(text, source).read() if run.figures or run.skipped]
    if not any(run.figures for run in runs):
        raise SpeedTextError(f"{source}: no AES figures from `openssl speed` found")
    return runs


class _Reader:
    def __init__(self, text: str, source: str):
        self.source = source
        tokens, self.lines, self.starts = [], [], []
        offset = 0
        for number, line in enumerate(_without_line_numbers(text.splitlines()), 1):
            for token in line.split():
                tokens.append(token)
                self.starts.append(offset)
                self.lines.append(number)
                offset += len(token) + 1
        self.flat = " ".join(tokens)
        self.session: dict[str, str] = {}  # exported OPENSSL_* variables, for the commands after them
        self.runs: list[SpeedRun] = []
        self.sizes: list[int] | None = None
        self.assignments: list[re.Match] = []  # the last run of NAME=value words, one after another

    def line_at(self, offset: int) -> int:
        return self.lines[bisect.bisect_right(self.starts, offset) - 1]

    def read(self) -> list[SpeedRun]:
        position = 0
        while position < len(self.flat):
            end = self._step(position)
            if end is None:  # nothing starts here: the next token
                space = self.flat.find(" ", position)
                end = len(self.flat) if space < 0 else space
            position = end + 1
        return self.runs

    def _run(self, starts_anew: bool, offset: int) -> SpeedRun:
        """The run output at ``offset`` belongs to: a new one once the last is complete."""
        if not self.runs or starts_anew:
            self.runs.append(SpeedRun(line=self.line_at(offset), environment=dict(self.session)))
            self.sizes = None
        return self.runs[-1]

    def _last(self) -> SpeedRun | None:
        return self.runs[-1] if self.runs else None

    def _step(self, at: int) -> int | None:
        """Read what starts at ``at``; the offset where it ends, None if nothing does."""
        for pattern, read in _READERS:
            if match := pattern.match(self.flat, at):
                return read(self, match, self._last())
        return None

    # Readers per kind of text: the offset where it ends, or None. A run is complete once a kind it
    # already has comes again.

    def _export(self, match: re.Match, last: SpeedRun | None) -> int:
        self.session[match["name"]] = _unquote(match["value"])
        return match.end()

    def _unset(self, match: re.Match, last: SpeedRun | None) -> int:
        self.session.pop(match["name"], None)
        return match.end()

    def _elapsed(self, match: re.Match, last: SpeedRun | None) -> int:
        self._run(last is None or last.began, match.start()).elapsed_notice = True
        return match.end()

    def _engine_set(self, match: re.Match, last: SpeedRun | None) -> int:
        # Printed while options are read.
        starts_anew = last is None or bool(last.engine_set or last.version or last._doing or last.table)
        self._run(starts_anew, match.start()).engine_set = match["id"]
        return match.end()

    def _doing_notice(self, match: re.Match, last: SpeedRun | None) -> int:
        self._timed(match.start(), match["name"], int(match["size"]), int(match["count"]), float(match["seconds"]),
                    int(match["planned"]))
        return match.end()

    def _mr_dt(self, match: re.Match, last: SpeedRun | None) -> int:
        run = self._run(last is None or bool(last.table) or (match["name"], int(match["size"])) in last._doing,
                        match.start())
        run._pending_dt = (match["name"], int(match["size"]))
        run.planned_seconds = int(match["planned"])
        return match.end()

    def _mr_r(self, match: re.Match, last: SpeedRun | None) -> int:
        if last and last._pending_dt and last._pending_dt[0] == match["name"]:
            self._timed(match.start(), match["name"], last._pending_dt[1], int(match["count"]),
                        float(match["seconds"]), None)
            last._pending_dt = None
        return match.end()

    def _version(self, match: re.Match, last: SpeedRun | None) -> int:
        run = self._run(last is None or bool(last.version or last.table), match.start())
        run.version = f"OpenSSL {match['v3']}" if match["v3"] else match["v1"]
        return match.end()

    def _cpuinfo(self, match: re.Match, last: SpeedRun | None) -> int:
        self._run(last is None or bool(last.cpuinfo or last.table), match.start()).cpuinfo = f"CPUINFO: {match['caps']}"
        return match.end()

    def _forked(self, match: re.Match, last: SpeedRun | None) -> int:
        self._run(last is None or bool(last.table), match.start()).children.add(match["child"])
        return match.end()

    def _mr_sizes(self, match: re.Match, last: SpeedRun | None) -> int:
        if match["got"]:  # one -multi child's sizes: the parent's sum (with no header of its own) has them too
            self._child(match.start(), match["child"])
        else:
            self._run(last is None or bool(last.table), match.start())
        self.sizes = [int(s) for s in match["sizes"].split(":")[1:]]
        return match.end()

    def _mr_figures(self, match: re.Match, last: SpeedRun | None) -> int:
        if match["got"]:
            self._child(match.start(), match["child"])
        else:
            self._row(match.start(), match["name"], [float(v) for v in match["figures"].split(":")[1:]])
        return match.end()

    def _table_header(self, match: re.Match, last: SpeedRun | None) -> int:
        self._run(last is None or bool(last.table), match.start())
        self.sizes = [int(s) for s in re.findall(r"(\d+) bytes", match["sizes"])]
        return match.end()

    def _key_row(self, match: re.Match, last: SpeedRun | None) -> int:
        self._run(False, match.start()).skipped.append(f"{match['name']}{match['bits']}")
        return match.end()

    def _table_row(self, match: re.Match, last: SpeedRun | None) -> int | None:
        # A row once sizes are known; AES figures without sizes are an error.
        if self.sizes is None and not _AES.match(match["name"].strip()):
            return None
        self._row(match.start(), match["name"], _cells(match))
        return match.end()

    def _assignment(self, match: re.Match, last: SpeedRun | None) -> int:
        if not self._assignments_before(match.start()):
            self.assignments = []
        self.assignments.append(match)
        return match.end()

    def _command(self, match: re.Match, last: SpeedRun | None) -> int:
        env = self._assignments_before(match.start())
        environment = {**self.session, **{each["name"]: _unquote(each["value"]) for each in env}}
        run = SpeedRun(line=self.line_at(match.start()), environment=environment)
        words, end = self._arguments(run, match.end())
        # As typed, less the prompt and the program's path.
        run.command = " ".join([*(each[0] for each in env), "openssl speed", *words])
        self.runs.append(run)
        self.sizes = None
        return end

    def _arguments(self, run: SpeedRun, at: int) -> tuple[list[str], int]:
        """The command's words from ``at``, options into run.options, and where they end."""
        words: list[str] = []
        end = at
        for word in _WORD.finditer(self.flat, at):
            option = words[-1] if words and words[-1] in _VALUED and run.options.get(words[-1]) == "" else None
            if option:
                run.options[option] = _unquote(word[0])
            elif word[0] in _VALUED or re.fullmatch(r"-[a-z][\w-]*", word[0]):
                run.options[word[0]] = ""
            elif not _algorithm(word[0]):
                break
            words.append(word[0])
            end = word.end()
        return words, end

    def _assignments_before(self, at: int) -> list[re.Match]:
        """The NAME=value words just before ``at`` (their command)."""
        return self.assignments if self.assignments and self.assignments[-1].end() + 1 == at else []

    def _child(self, at: int, child: str | None) -> None:
        if child is not None:
            self._run(False, at).children.add(child)

    def _timed(self, at: int, name: str, size: int, count: int, seconds: float, planned: int | None) -> None:
        last = self._last()
        run = self._run(last is None or bool(last.table) or (name, size) in last._doing, at)
        run._doing.add((name, size))
        if planned is not None:
            run.planned_seconds = planned
        aes = _AES.match(name.strip())
        if not aes:
            if name not in run.skipped:
                run.skipped.append(name)
        elif seconds > 0:
            run.timed.append(_figure(aes, name, size, count * size / seconds))

    def _row(self, at: int, name: str, figures: list[float]) -> None:
        run, name = self._run(False, at), name.strip()
        aes = _AES.match(name)
        if not aes:
            run.skipped.append(name)
            return
        line = self.line_at(at)
        if self.sizes is None:
            raise SpeedTextError(f"{self.source}:{line}: figures for {name} before any size header", line)
        if len(figures) != len(self.sizes):
            raise SpeedTextError(f"{self.source}:{line}: {len(figures)} figures for {len(self.sizes)} sizes "
                                 f"({', '.join(map(str, self.sizes))} bytes)", line)
        run.table += [_figure(aes, name, size, value) for size, value in zip(self.sizes, figures)]


# Tried in order: a command line first, a table row (loosest) last.
_READERS: list[tuple[re.Pattern, Callable[[_Reader, re.Match, SpeedRun | None], int | None]]] = [
    (_COMMAND, _Reader._command), (_EXPORT, _Reader._export), (_UNSET, _Reader._unset),
    (_ELAPSED, _Reader._elapsed), (_ENGINE_SET, _Reader._engine_set), (_DOING, _Reader._doing_notice),
    (_MR_DT, _Reader._mr_dt), (_MR_R, _Reader._mr_r), (_VERSION, _Reader._version), (_CPUINFO, _Reader._cpuinfo),
    (_CHILD, _Reader._forked), (_MR_SIZES, _Reader._mr_sizes), (_MR_FIGURES, _Reader._mr_figures),
    (_TABLE_HEADER, _Reader._table_header), (_KEY_ROW, _Reader._key_row), (_TABLE_ROW, _Reader._table_row),
    (_ASSIGNMENT, _Reader._assignment)]


def _without_line_numbers(lines: list[str]) -> list[str]:
    """``lines`` less glued-on line numbers, in stretches of three or more consecutive numbers."""
    lines = [line.lstrip() for line in lines]  # indentation means nothing here: tokens are read
    start = 0
    while start < len(lines):
        first, end = re.match(_INT, lines[start]), start
        while first and end < len(lines) and lines[end].startswith(str(int(first[0]) + end - start)):
            end += 1
        if end - start >= 3 and first:
            for at in range(start, end):
                lines[at] = lines[at][len(str(int(first[0]) + at - start)):]
        start = max(end, start + 1)
    return lines


def _cells(row: re.Match) -> list[float]:
    """A table row's figures in bytes per second."""
    return [float(c[:-1]) * 1000 if c.endswith("k") else float(c) for c in row["figures"].split(" ")]


def _figure(aes: re.Match, name: str, size: int, bytes_per_s: float) -> SpeedFigure:
    return SpeedFigure(cipher=f"aes-{aes[1]}-{aes[2].lower()}", message_bytes=size, bytes_per_s=bytes_per_s,
                       low_level=" " in name.strip())


def _algorithm(word: str) -> bool:
    """Whether ``word`` can be an `openssl speed` algorithm argument."""
    return bool(re.fullmatch(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*", word)) and (
        any(c.isdigit() for c in word) or word in _PLAIN_NAMES)


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value
