"""One child process per measured configuration, as pyperf's manager/worker split.

Why a process each: JPype starts one JVM per process, never restarts it, and a failed start
poisons the process; OpenSSL reads OPENSSL_ia32cap once, at load. The request travels as JSON
on stdin and the result comes back in a file, because a JVM writes its own messages (warnings,
PrintIntrinsics) straight to fd 1 and would corrupt a result sent on stdout.
"""
from __future__ import annotations

import functools
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Mapping, NamedTuple

from jvmbridge.workload import Sampling


# Why a configuration has no more forks after Ctrl-C; the ones that finished stay its measurement.
INTERRUPTED = "interrupted (Ctrl-C)"

# Writes a child's result where run_child reads it; a later call replaces an earlier, partial one.
Save = Callable[[dict], None]


class WorkerError(Exception):
    """A failure the worker understood; its message is meant for the user as it is."""


@dataclass
class ChildOutcome:
    result: dict | None  # None when the child died before writing one
    returncode: int
    stdout: str
    stderr: str

    @property
    def error(self) -> str | None:
        """One line saying why no result came back, or None when one did."""
        if self.result is not None and "error" not in self.result:
            return None
        if self.result is not None:
            return self.result["error"]
        last = _last_line(self.stderr) or _last_line(self.stdout)
        return f"worker died ({self.how_it_ended})" + (f": {last}" if last else "")

    @property
    def answer(self) -> dict:
        """The result of a child that finished (``error`` is None)."""
        if self.result is None:
            raise WorkerError(self.error)
        return self.result

    @property
    def how_it_ended(self) -> str:
        """"killed by SIGABRT", "exit code 1"."""
        return (f"killed by {signal.Signals(-self.returncode).name}" if self.returncode < 0
                else f"exit code {self.returncode}")


class Forks(NamedTuple):
    """One part's forks: the outcomes of those that finished it, and the one that failed it, if any."""
    finished: list[ChildOutcome]
    failed: ChildOutcome | None

    @property
    def failure(self) -> ChildOutcome:
        """Why none finished: the failed fork (run_forks gives every part one or the other)."""
        if self.failed is None:
            raise WorkerError("no fork ran")
        return self.failed


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while a child ran; ``result`` is what the child had saved by then (each_part saves
    every finished part), or None."""

    def __init__(self, result: dict | None):
        super().__init__()
        self.result = result


def run_child(module: str, request: Mapping, env: Mapping[str, str] | None = None) -> ChildOutcome:
    """Run ``python -m module`` with ``request`` and collect what it reported."""
    with tempfile.TemporaryDirectory(prefix="jvmbridge-") as scratch:
        result_path = os.path.join(scratch, "result.json")
        try:
            done = subprocess.run(
                [sys.executable, "-m", module, result_path],
                input=json.dumps(request), capture_output=True, text=True, errors="replace",
                env=dict(env) if env is not None else None,
            )
        except KeyboardInterrupt:  # subprocess.run has stopped the child; its saved parts still count
            raise Interrupted(_load(result_path)) from None
        return ChildOutcome(_load(result_path), done.returncode, done.stdout, done.stderr)


def _load(result_path: str) -> dict | None:
    if not os.path.exists(result_path):
        return None
    with open(result_path) as f:
        return json.load(f)


def rounds_of(outcomes: list[ChildOutcome]) -> list[dict]:
    """Every timed round of every fork, in run order: the samples of one configuration."""
    return [r for outcome in outcomes for r in outcome.answer["rounds"]]


def run_forks(module: str, request: Mapping, parts: list[dict], samplings: list[Sampling],
              env: Mapping[str, str] | None = None) -> list[Forks]:
    """Fresh children, as JMH's forks, until each part (a workload the child measures, see
    each_part) has the forks its sampling wants: run-to-run variation (JIT decisions, memory
    layout) shows up in the spread. One child measures every part that still wants a fork, in an
    order of its own per fork, so no part always runs first or last, and start-up is paid once.
    Each part's outcomes carry the child's shared fields beside its own.

    A part that failed gets no more forks; what it finished before is kept. A child that died
    during a part (a JVM's SIGSEGV) fails that part only: the parts it finished before count, the
    ones it had not reached go on in the next fork. One that died before any part (or refused the
    request) fails every part it held. Ctrl-C ends the forks the same way: the parts the child
    under way had finished count, the others fail as interrupted (the caller stops after this).
    Per part: its Forks."""
    done: list[list[ChildOutcome]] = [[] for _ in parts]
    failed: list[ChildOutcome | None] = [None] * len(parts)

    def short_of_forks(i: int) -> bool:
        return failed[i] is None and samplings[i].wants_another_fork(rounds_of(done[i]), len(done[i]))

    def take(pending: list[int], outcome: ChildOutcome) -> list[dict] | None:
        """Each answer the child gave to its part, kept or failed; the answers (None: none came back)."""
        answers = (outcome.result or {}).get("parts")
        shared = {k: v for k, v in (outcome.result or {}).items() if k != "parts"}
        for i, answer in zip(pending, answers or []):
            each = ChildOutcome({**shared, **answer}, outcome.returncode, outcome.stdout, outcome.stderr)
            if each.error:
                failed[i] = each
            else:
                done[i].append(each)
        return answers

    try:
        for fork in itertools.count():
            pending = [i for i in range(len(parts)) if short_of_forks(i)]
            if not pending:
                break
            random.Random(fork).shuffle(pending)
            try:
                outcome = run_child(module, {**request, "parts": [parts[i] for i in pending]}, env)
            except Interrupted as stop:  # what the child finished counts; then as any Ctrl-C below
                take(pending, ChildOutcome(stop.result, -signal.SIGINT, "", ""))
                raise
            answers = take(pending, outcome)
            if answers is None:
                for i in pending:
                    failed[i] = outcome
                break
            if len(answers) < len(pending):  # it died measuring this one
                failed[pending[len(answers)]] = ChildOutcome(None, outcome.returncode, outcome.stdout, outcome.stderr)
    except KeyboardInterrupt:  # in a child or between two: every part still short of its forks says so
        for i in filter(short_of_forks, range(len(parts))):
            failed[i] = ChildOutcome({"error": INTERRUPTED}, -signal.SIGINT, "", "")
    return [Forks(finished, failure) for finished, failure in zip(done, failed)]


def each_part(request: dict, measure: Callable[[dict], dict], shared: dict, save: Save) -> dict:
    """The child's side of run_forks: ``measure`` each part of ``request`` in turn, given the
    request's own fields beside the part's; a part that fails says why and the rest still run. The
    result is ``shared`` with every part's answer, saved with serve's ``save`` after each part, so a
    crash or Ctrl-C in a later part keeps the earlier ones. The first part warms up for
    warmup_min_seconds, later ones (the process already warm) for later_warmup_min_seconds where
    the request gives it."""
    answers: list[dict] = []
    first = {key: value for key, value in request.items() if key != "parts"}
    later = {**first, "warmup_min_seconds": request.get("later_warmup_min_seconds", first.get("warmup_min_seconds"))}
    for number, part in enumerate(request["parts"]):
        try:
            answers.append(measure({**(later if number else first), **part}))
        except WorkerError as e:
            answers.append({"error": str(e)})
        save({**shared, "parts": answers})
    return {**shared, "parts": answers}


def serve(handler: Callable[[dict, Save], dict]) -> None:
    """The child's main: read the request, run ``handler`` (given ``save`` for partial results),
    write its result or its error."""
    save = functools.partial(_save, sys.argv[1])
    request = json.load(sys.stdin)
    try:
        result, status = handler(request, save), 0
    except WorkerError as e:
        result, status = {"error": str(e)}, 1
    save(result)
    sys.stdout.flush()
    # os._exit: a started JVM's shutdown can hang or crash after the result is safely written.
    os._exit(status)


def _save(path: str, result: dict) -> None:
    """Write ``result`` whole or not at all: a crash mid-write must not leave half a file."""
    with open(f"{path}.partial", "w") as f:
        json.dump(result, f)
    os.replace(f"{path}.partial", path)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
