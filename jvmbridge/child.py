"""One child process per measured configuration, as pyperf's manager/worker split.

Why a process each: JPype starts one JVM per process, never restarts it, and a failed start
poisons the process; OpenSSL reads OPENSSL_ia32cap once, at load. The request travels as JSON
on stdin and the result comes back in a file, because a JVM writes its own messages (warnings,
PrintIntrinsics) straight to fd 1 and would corrupt a result sent on stdout.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Mapping

from jvmbridge.workload import Sampling


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
    def how_it_ended(self) -> str:
        """"killed by SIGABRT", "exit code 1"."""
        return (f"killed by {signal.Signals(-self.returncode).name}" if self.returncode < 0
                else f"exit code {self.returncode}")


def run_child(module: str, request: Mapping, env: Mapping[str, str] | None = None) -> ChildOutcome:
    """Run ``python -m module`` with ``request`` and collect what it reported."""
    with tempfile.TemporaryDirectory(prefix="jvmbridge-") as scratch:
        result_path = os.path.join(scratch, "result.json")
        done = subprocess.run(
            [sys.executable, "-m", module, result_path],
            input=json.dumps(request), capture_output=True, text=True, errors="replace",
            env=dict(env) if env is not None else None,
        )
        result = None
        if os.path.exists(result_path):
            with open(result_path) as f:
                result = json.load(f)
    return ChildOutcome(result, done.returncode, done.stdout, done.stderr)


def rounds_of(outcomes: list[ChildOutcome]) -> list[dict]:
    """Every timed round of every fork, in run order: the samples of one configuration."""
    return [r for outcome in outcomes for r in outcome.result["rounds"]]


def run_forks(module: str, request: Mapping, parts: list[dict], samplings: list[Sampling],
              env: Mapping[str, str] | None = None) -> list[tuple[list[ChildOutcome], ChildOutcome | None]]:
    """Fresh children, as JMH's forks, until each part (a workload the child measures, see
    each_part) has the forks its sampling wants: run-to-run variation (JIT decisions, memory
    layout) shows up in the spread. One child measures every part that still wants a fork, in an
    order of its own per fork, so no part always runs first or last, and start-up is paid once.
    Each part's outcomes carry the child's shared fields beside its own. A fork that died ends
    every part it held, one part's error only that part; what finished before is kept.
    Per part: (its outcomes, the failure or None)."""
    done: list[list[ChildOutcome]] = [[] for _ in parts]
    failed: list[ChildOutcome | None] = [None] * len(parts)
    for fork in itertools.count():
        pending = [i for i, sampling in enumerate(samplings)
                   if failed[i] is None and sampling.wants_another_fork(rounds_of(done[i]), len(done[i]))]
        if not pending:
            break
        random.Random(fork).shuffle(pending)
        outcome = run_child(module, {**request, "parts": [parts[i] for i in pending]}, env)
        if outcome.error:
            for i in pending:
                failed[i] = outcome
            break
        shared = {k: v for k, v in outcome.result.items() if k != "parts"}
        for i, answer in zip(pending, outcome.result["parts"]):
            each = ChildOutcome({**shared, **answer}, outcome.returncode, outcome.stdout, outcome.stderr)
            if each.error:
                failed[i] = each
            else:
                done[i].append(each)
    return list(zip(done, failed))


def each_part(request: dict, measure: Callable[[dict], dict]) -> list[dict]:
    """The child's side of run_forks: ``measure`` each part of ``request`` in turn, given the
    request's shared fields beside the part's own; a part that fails says why and the rest still
    run. The first part warms up for warmup_min_seconds, later ones (the process already warm) for
    later_warmup_min_seconds where the request gives it."""
    answers = []
    for number, part in enumerate(request["parts"]):
        fields = {key: value for key, value in request.items() if key != "parts"}
        if number and "later_warmup_min_seconds" in request:
            fields["warmup_min_seconds"] = request["later_warmup_min_seconds"]
        try:
            answers.append(measure({**fields, **part}))
        except WorkerError as e:
            answers.append({"error": str(e)})
    return answers


def serve(handler: Callable[[dict], dict]) -> None:
    """The child's main: read the request, run ``handler``, write its result or its error."""
    result_path = sys.argv[1]
    request = json.load(sys.stdin)
    try:
        result, status = handler(request), 0
    except WorkerError as e:
        result, status = {"error": str(e)}, 1
    with open(result_path, "w") as f:
        json.dump(result, f)
    sys.stdout.flush()
    # os._exit: a started JVM's shutdown can hang or crash after the result is safely written.
    os._exit(status)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
