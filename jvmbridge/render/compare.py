"""A `compare` run for people (table, Markdown) and for programs (JSON, CSV)."""
from __future__ import annotations

import re

from jvmbridge.comparison.cliffs import CLIFF_FACTOR
from jvmbridge.comparison.headline import answered, headline
from jvmbridge.comparison.runner import Comparison
from jvmbridge.conductor.pairing import FAST_END
from jvmbridge.engines import by_label, name_of
from jvmbridge.host.cpu import features_text
from jvmbridge.host.machine import load_text
from jvmbridge.render import jmh
from jvmbridge.render.text import as_json, as_lines, csv_of_frame, fitted, markdown
from jvmbridge.results import NoteKind, missing, ran_interleaved, rounds_per_fork
from jvmbridge.saved.schema import SCHEMA_VERSION, row_record
from jvmbridge.stats.summary import CONFIDENCE, DISTURBED_SHARE, FEW_FORKS

UNITS = {
    "ns_per_op": "nanoseconds per message (how: each row's `statistic`)",
    "statistic": f"how ns_per_op was computed; undisturbed rounds lost at most {DISTURBED_SHARE:.0%} of their "
                 "wall time to other work (round_lost_share); the interval is Student's t over forks",
    "ops_per_s": "messages per second",
    "mb_per_s": "10^6 bytes of plaintext per second",
    "openssl_kbytes_per_s": "1000s of bytes of plaintext per second, as `openssl speed` tables",
    "ns_per_op_error": "half-width of ns_per_op's confidence interval over forks (level in `confidence`)",
    "fork_ns_per_op": "each fork's summary (the lower quartile of its undisturbed rounds), ns per message",
    "jmh_score": "JMH's Score: mean ns per message over every round of every fork, pooled",
    "jmh_error": "JMH's Error: half-width of the 99.9% interval of jmh_score (pooled rounds)",
    "rsd": "relative standard deviation of ns/op across rounds inside their forks (fraction); null: one round a fork",
    "round_iterations": "messages in each round",
    "round_set_aside": "per round: empty (in the figure), disturbed, or warm-up (before its fork's last change point)",
    "fork_steadiness": "per fork: flat, warm-up, slowdown or no steady state (PELT change points in its warm-up and rounds)",
    "round_lost_share": "per round, the share of its wall time lost to run-queue wait and steal (fraction)",
    "round_counters": "per round: cpu_ns (loop thread CPU time; openssl speed: its process's), wait_ns "
                      "(run-queue wait; openssl speed: its process's wall time less CPU time), steal_ns "
                      "(host steal per vCPU), gc_ms, jit_ms, each where read",
    "metadata.load": "other_cpus: vCPUs other processes kept busy on average during the run (the machine's busy "
                     "time less jvmbridge's and its children's); steal_cpus: vCPUs the host took (steal); seconds: "
                     "the run's wall time; null where /proc/stat is unreadable",
    "metadata.work_seconds": "with --iterations, the run's work: each row's messages at its ns_per_op, summed over "
                             "the rows (the count asked, or the messages timed where an engine runs for a time: "
                             "openssl speed); s",
    "other_cpus": "vCPUs other processes kept busy on average while the row's job ran (null: not read)",
    "ratios.times": "how many times faster (ratio of ns_per_op); low/high from the rows' intervals",
    "null": "a figure that is not defined, e.g. an interval's bound from a single sample",
}


def render_json(comparison: Comparison) -> str:
    # The results as saved, with the ratios and findings.
    return as_json({
        "schema_version": SCHEMA_VERSION,
        "units": UNITS,
        "metadata": comparison.metadata,
        "results": [row_record(result) for result in comparison.results],
        "headline": headline(comparison.ratios, comparison.frame, comparison.metadata),
        "ratios": [r.as_dict() for r in comparison.ratios],
        "findings": [{"row": index + 1, **note.as_dict()} for index, note in comparison.overhead.items()],
        "cliffs": [cliff.as_dict() for cliff in comparison.cliffs],
        "failures": [{"configuration": c, "error": e} for c, e in comparison.failures],
    })


def render_jmh(comparison: Comparison) -> str:
    """JMH's `-rf json` shape, for the tools that read JMH's results."""
    return as_json(jmh.records(comparison.frame, comparison.metadata.get("workload", {}).get("round_seconds")))


def render_csv(comparison: Comparison) -> str:
    frame = comparison.frame
    if frame.empty:
        return ""
    return csv_of_frame(frame.assign(notes=[_notes_text(comparison, i, row) for i, row in enumerate(frame.itertuples())]))


# Left out first where the table is too wide: columns restating others, then what is looked up later.
_EXPENDABLE = ["openssl 1000s B/s", "ops/s", "ops/s/thread", "messages", "samples", "as asked", "ciphertext",
               "rsd", "shape", "cipher", "bytes"]


def render_table(comparison: Comparison, width: int | None = None) -> str:
    # Shape, cipher or size tell rows apart where several: never left out then.
    frame = comparison.frame
    needed = {header for header, column in (("shape", "shape"), ("cipher", "cipher"), ("bytes", "message_bytes"))
              if column in frame and frame[column].nunique() > 1}
    expendable = [column for column in _EXPENDABLE if column not in needed]

    def tabulate(cells: list[list[str]]) -> tuple[list[str], list[str]]:
        lines, left_out = fitted(cells, width, expendable, right_from=5)
        if left_out and width is not None:  # None: every column, none left out
            lines.append(_left_out(left_out, width))
        return lines, [column for column in cells[0] if column not in left_out]

    return _render(comparison, tabulate)


def render_markdown(comparison: Comparison) -> str:
    return _render(comparison, lambda cells: (markdown(cells), cells[0]))


def _left_out(columns: list[str], width: int) -> str:
    """"(--wide shows 8 more columns: openssl 1000s B/s, ops/s, ...)", as many as fit ``width``."""
    said = f"(--wide shows {len(columns)} more column{'s' if len(columns) > 1 else ''}: "
    names = list(columns)
    while len(names) > 1 and len(said + ", ".join(names) + ", ...)") > width:
        names.pop()
    return said + ", ".join(names) + (", ..." if len(names) < len(columns) else "") + ")"


def _ratios_heading(ratios, levels: str, above: bool, below: bool) -> str:
    """What the ratios are, once per kind: the headline's (``above``), those listed here (``below``)."""
    how = (f"; the ratio of the figures, its interval from their {levels} intervals in quadrature on the log scale"
           if any(not r.interleaved for r in ratios) else "")
    if not below:
        return f"The headline's ratios: ± the wider side of the {CONFIDENCE:.0%} interval{how}."
    which = "More ratios" if above else "Ratios"
    return f"{which} (in brackets the {CONFIDENCE:.0%} interval{how}):"


def _render(comparison: Comparison, tabulate) -> str:
    """The table and Markdown formats' sections in order."""
    answers = headline(comparison.ratios, comparison.frame, comparison.metadata)
    top = [*answers, *([""] if answers else []), *_header(comparison)]
    if comparison.frame.empty:
        return as_lines([*top, "", "No configuration produced a result."])
    table, columns = _table(comparison, tabulate)
    return as_lines([*top, *table, *_legend(comparison, columns), *_states(comparison.frame),
                     *_ratios_below(comparison), *_cliffs(comparison),
                     *_notes(comparison), *_hints(comparison, comparison.frame)])


def _header(comparison: Comparison) -> list[str]:
    """What ran, on what and how: a line each above the table."""
    meta, frame = comparison.metadata, comparison.frame
    return [_title(meta), _method(meta),
            f"CPU      {_model(meta['cpu']['model'])} [{features_text(meta['cpu']['features'])}]",
            f"Host     {meta['host']}, kernel {meta['kernel']}, {meta['started_utc']}",
            *_circumstances(meta),
            *_overridden(frame),
            *[f"Figures  ns/op is {statistic}" for statistic in dict.fromkeys(frame.get("statistic", []))],
            *([f"Ratios   per fork of the rows' {FAST_END}th-percentile slices, geometric mean over forks"]
              if any(r.interleaved for r in comparison.ratios) else []),
            *[f"Engine   {line}" for line in _engines(frame)]]


def _model(model: str) -> str:
    """The CPU model without trademark signs, to fit a terminal line."""
    return re.sub(r"\((R|TM)\)", "", model)


def _title(meta: dict) -> str:
    """"jvmbridge 0.3.0 compare: AES-256-CBC, PKCS#7 padding, 38-byte messages"."""
    work = meta["workload"]
    ciphers = ", ".join(c.upper() for c in work["ciphers"])
    cbc = [c.endswith("cbc") for c in work["ciphers"]]
    padding = "no padding" if not any(cbc) else "PKCS#7 padding" if all(cbc) else "PKCS#7 padding for CBC"
    sizes = ", ".join(map(str, work["sizes"]))
    return f"jvmbridge {meta['jvmbridge_version']} compare: {ciphers}, {padding}, {sizes}-byte messages"


def _method(meta: dict) -> str:
    """Rounds and forks or cycles of slices, and the time limit."""
    limit = f", within {meta['total_time_seconds']:g} s in all (--total-time)" if meta.get("total_time_seconds") else ""
    return f"Method   {meta['workload']['budget']}{limit}"


def _circumstances(meta: dict) -> list[str]:
    """The header's optional lines: other load, why forks stopped, JVM leftovers, emulation, sharing."""
    lines = []
    if meta.get("load"):  # runs saved before it was recorded, or where /proc/stat is unreadable, do not say
        lines.append(f"Load     {load_text(meta['load'])}")
    if meta.get("forks_stopped"):  # runs saved before the conductor said it do not say
        lines.append(f"Forks    {meta['forks_stopped']}")
    if meta.get("work_seconds"):  # --iterations: the work asked, against the time the run took
        work, run = meta["work_seconds"], (meta.get("load") or {}).get("seconds")
        lines.append(f"Work     {meta['workload']['iterations']:,} messages of each row (those timed where it runs "
                     f"for a time) at its ns/op: {work:.1f} s"
                     + (f"; the run took {run:.0f} s ({run / work:.2f}x)" if run else ""))
    if meta.get("environment_left_out"):  # runs saved before it was recorded do not say
        # Names alone: older runs hold values too (a dict).
        lines.append("Env      left out of every measured JVM: " + " ".join(map(str, meta["environment_left_out"]))
                     + " (give such options with --jvm-arg to measure with them)")
    if meta["cpu"].get("emulation"):  # runs saved before it was recorded do not say
        lines.append(f"EMULATED {meta['cpu']['emulation']}: the CPU runs in software, so every time here "
                     "means nothing; flags, states and bytes still hold")
    if meta.get("workloads_per_fork", 1) > 1:  # runs saved before batching measured one workload a process
        lines.append(_batched(meta))
    return lines


def _batched(meta: dict) -> str:
    return (f"Forks    one process per fork measures up to {meta['workloads_per_fork']} workloads of a "
            "configuration, in an order of its own per fork"
            + ("; in a shared JVM (--shared-jvm) each after the first runs on code the JIT compiled for "
               "the others too, and can be up to a fifth slower than in a JVM of its own"
               if meta.get("jit_shared_by", 0) > 1 else ""))


def _levels(frame) -> str:
    """The rows' confidence levels, as the interval column names them."""
    return "/".join(f"{c:.4g}%" for c in dict.fromkeys(frame.confidence * 100))


def _threads(comparison: Comparison) -> int:
    return comparison.metadata["workload"].get("threads", 1)


def _table(comparison: Comparison, tabulate) -> tuple[list[str], list[str]]:
    """The table's lines (a blank one first) and its columns."""
    parallel, jmh_columns = _threads(comparison) > 1, comparison.jmh_columns
    header = ["#", "engine", "setting", "cipher", "shape", "bytes", "ns/op", f"±{_levels(comparison.frame)}", "rsd",
              "ops/s", *(["ops/s/thread"] if parallel else []), "MB/s", "openssl 1000s B/s", "samples", "messages",
              "as asked", "ciphertext", *(["JMH score", "±99.9%"] if jmh_columns else [])]
    body = [_cells(i + 1, row, parallel, jmh_columns) for i, row in enumerate(comparison.frame.itertuples())]
    lines, columns = tabulate([header, *body])
    return ["", *lines], columns


def _cells(number: int, row, parallel: bool, jmh_columns: bool) -> list[str]:
    """One row of the table, in the header's order."""
    return [str(number), name_of(row), row.setting, _cipher(row), row.shape, str(row.message_bytes),
            f"{row.ns_per_op:,.1f}", _error_percent(row), "-" if missing(row.rsd) else f"{row.rsd:.1%}", _si(row.ops_per_s),
            *([_si(row.ops_per_s_per_thread)] if parallel else []), f"{row.mb_per_s:,.1f}",
            f"{row.openssl_kbytes_per_s:,.0f}", _samples(row), f"{row.iterations:,}",
            "yes" if row.as_requested else "NO", _ciphertext(row.ciphertext_ok),
            *([f"{row.jmh_score:,.1f}", _relative(row.jmh_error, row.jmh_score)] if jmh_columns else [])]


def _states(frame) -> list[str]:
    """Each read-back state once, after its rows; the implementation too where several JDKs ran."""
    several = frame.groupby("engine")["implementation"].nunique().max() > 1
    states: dict[str, list[int]] = {}
    for i, row in enumerate(frame.itertuples()):
        states.setdefault((f"{row.implementation}: " if several else "") + _flags(row.verified_state), []).append(i + 1)
    width = max(len(", ".join(map(str, rows))) for rows in states.values())
    return ["", "Read back from the running engines (the JVM's flags, OpenSSL's CPU mask):",
            *[f"  {', '.join(map(str, rows)):>{width}}  {state}" for state, rows in states.items()]]


def _flags(state: str) -> str:
    """HotSpot notation for booleans read back: "+UseAES -UseAESIntrinsics"; other words as they are."""
    def flag(word: str) -> str:
        name, _, value = word.partition("=")
        return {"true": "+", "false": "-"}[value] + name if value in ("true", "false") else word

    return " ".join(map(flag, state.split()))


def _ratios_below(comparison: Comparison) -> list[str]:
    """Each ratio not in the headline, and how they were computed."""
    if not comparison.ratios:
        return []
    said = answered(comparison.ratios, comparison.metadata)
    rest = [r for r in comparison.ratios if r not in said]
    # Every one from paired slices of the same forks: said once.
    how = len({(r.interleaved, r.turns) for r in comparison.ratios}) > 1 or not comparison.ratios[0].interleaved
    return ["", _ratios_heading(comparison.ratios, _levels(comparison.frame), bool(said), bool(rest)),
            *[f"  {r.label}: {r.describe(how)}" for r in rest]]


def _cliffs(comparison: Comparison) -> list[str]:
    if not comparison.cliffs:
        return []
    return ["", f"Cliffs (between adjacent sizes, beyond the intervals and by more than {CLIFF_FACTOR:g}x; "
                "a size between them shows where):",
            *[f"  {cliff.describe()}" for cliff in comparison.cliffs]]


def _notes(comparison: Comparison) -> list[str]:
    """The notes shown (at most MAX_NOTE_LINES without -v), then how many more -v adds."""
    frame = comparison.frame
    notes = _notes_once(comparison, frame)
    hidden = sum(not _shown(comparison, note, row) for row in frame.itertuples() for note in row.notes)
    lines = []
    if notes:
        width = max(len(rows) for rows, _ in notes)
        shown = notes if comparison.verbose else notes[:MAX_NOTE_LINES]
        lines += ["", "Notes:"] + [f"  {rows:>{width}}  {text}" for rows, text in shown]
        if len(shown) < len(notes):
            lines.append(f"  ... {len(notes) - len(shown)} more lines of notes: -v shows them")
    if hidden:  # under the notes shown, or on its own
        lines += [] if notes else [""]
        lines.append(f"  ({hidden} notes on how rows were sampled: -v shows them, as JSON does)")
    return lines


def _legend(comparison: Comparison, columns: list[str]) -> list[str]:
    """What the shown columns mean, right under the table."""
    interval = f"±{_levels(comparison.frame)}"
    meanings = {interval: "half-width of the t interval over forks", "rsd": "of rounds inside forks (-: one a fork)",
                "samples": "forks x rounds per fork (a range where forks ran more to replace disturbed ones)",
                "MB/s": "10^6 B/s of plaintext", "as asked": "flags or CPU mask read back match the request"}
    lines = ["; ".join(f"{column}: {meaning}" for column, meaning in meanings.items() if column in columns) + "."]
    if comparison.jmh_columns:
        lines.append("JMH score: JMH's figure, the mean ns/op of every round of every fork pooled (none set aside); "
                     "±99.9%: its Error, t(0.9995, rounds - 1) s / sqrt(rounds), relative.")
    threads = _threads(comparison)
    if threads > 1:
        lines.append(f"{threads} loops at once: ns/op, ops/s and MB/s are all loops together (wall time); "
                     "ops/s/thread = ops/s / threads.")
    return lines


def _overridden(frame) -> list[str]:
    """Once above the figures: rows whose --jvm-arg contradicts their setting; labels follow what ran."""
    if frame.empty or "requested_setting" not in frame:
        return []
    asked: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(frame.itertuples()):
        if isinstance(row.requested_setting, str):
            asked.setdefault((row.requested_setting, row.setting), []).append(i + 1)
    return [f"Asked    row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))} asked for \"{wanted}\" but ran "
            f"with {ran}: the options given override it (see the state read back); labels, \"as asked\" and "
            "ratios follow what ran" for (wanted, ran), rows in asked.items()]


def _cipher(row) -> str:
    return f"{row.cipher} decrypt" if row.direction == "decrypt" else row.cipher


def _engines(frame) -> list[str]:
    """Each implementation once, with its JAVA_HOME or openssl binary."""
    described = []
    for row in frame.itertuples():
        engine = by_label(row.engine)
        origin = engine.origin(row) if engine else None
        named = engine.implementation_text(row) if engine else row.implementation
        described.append(named + (f" ({origin})" if origin else ""))
    return list(dict.fromkeys(described))


# Notes under the table by default: the kinds a reader must not miss.
MAX_NOTE_LINES = 8
# Sampling notes: always in JSON, CSV and the saved run; under the table with -v only.
_DETAIL = {NoteKind.NOISY, NoteKind.DISTURBED, NoteKind.IMPRECISE, NoteKind.OUT_OF_REACH, NoteKind.FEW_SAMPLES,
           NoteKind.NOT_STEADY, NoteKind.BUSY, NoteKind.ROUNDS, NoteKind.SHARED}


def _shown(comparison: Comparison, note: dict, row) -> bool:
    kind = NoteKind(note["kind"])
    # Interleaved, a row's fork levels are mostly host drift the ratios cancel: a sampling note.
    sampled = kind is NoteKind.LEVELS and ran_interleaved(row)
    return comparison.verbose or not (kind in _DETAIL or sampled)


def _notes_of(comparison: Comparison, index: int, row, every: bool = True) -> list[str]:
    """A row's notes (``every``: all; else those shown under the table) and side-by-side findings."""
    texts = [note["text"] for note in row.notes if every or _shown(comparison, note, row)]
    if index in comparison.overhead:
        texts.append(comparison.overhead[index].text)
    return texts


def _notes_text(comparison: Comparison, index: int, row) -> str:
    """A row's notes on one line (the notes column)."""
    return "; ".join(_notes_of(comparison, index, row))


def _notes_once(comparison: Comparison, frame) -> list[tuple[str, str]]:
    """Each note once: a shared one on its own line after its rows ("3, 4"), then each row's own."""
    notes = [_notes_of(comparison, i, row, every=False) for i, row in enumerate(frame.itertuples())]
    rows_of: dict[str, list[int]] = {}
    for i, texts in enumerate(notes, 1):
        for text in texts:
            rows_of.setdefault(text, []).append(i)
    lines = []
    for i, texts in enumerate(notes, 1):
        lines += [(", ".join(map(str, rows_of[text])), text) for text in texts if rows_of[text][0] == i < rows_of[text][-1]]
        own = [text for text in texts if rows_of[text] == [i]]
        if own:
            lines.append((str(i), "; ".join(own)))
    return lines


def _hints(comparison: Comparison, frame) -> list[str]:
    """Each hint once, naming its rows."""
    applies: dict[str, list[int]] = {}
    for i, row in enumerate(frame.itertuples()):
        for note in (note for note in row.notes if _shown(comparison, note, row)):
            hint = NoteKind(note["kind"]).hint
            if hint and i + 1 not in applies.setdefault(hint, []):
                applies[hint].append(i + 1)
    return [f"  row{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))}: {hint}"
            for hint, rows in applies.items()]


def _samples(row) -> str:
    """Forks x rounds per fork: "12x4", or "12x4-6" with spare rounds for disturbed ones."""
    per_fork = rounds_per_fork(row.round_fork, row.rounds, row.forks)
    low, high = min(per_fork), max(per_fork)
    return f"{row.forks}x{low}" + (f"-{high}" if high > low else "")


def _error_percent(row) -> str:
    # Pre-0.3.0 rows list no forks; too few forks note their range instead.
    return "n/a" if 0 < len(row.fork_ns_per_op) < FEW_FORKS else _relative(row.ns_per_op_error, row.ns_per_op)


def _relative(error, value: float) -> str:
    """A half-width as a share of its figure; n/a where none."""
    return "n/a" if missing(error) else f"{error / value:.1%}"


def _ciphertext(ok) -> str:
    if missing(ok):
        return "-"
    return "= OpenSSL" if ok else "WRONG"


def _si(value: float) -> str:
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.2f}{suffix}"
    return f"{value:.1f}"

