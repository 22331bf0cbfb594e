"""The parent's side of the forks: one child process per measured configuration, as pyperf's
manager/worker split (the child's side is forks.worker, the messages between them forks.protocol).

Why a process each: JPype starts one JVM per process, never restarts it, and a failed start
poisons the process; OpenSSL reads OPENSSL_ia32cap once, at load. The request travels as JSON
on stdin and the result comes back in a file, because a JVM writes its own messages (warnings,
PrintIntrinsics) straight to fd 1 and would corrupt a result sent on stdout.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import os
import pwd
import random
import re
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Mapping, NamedTuple, Sequence

from jvmbridge.sampling.policy import Sampling, forks_wanted
from jvmbridge.trust.launch import launch, python_command

# Why a configuration has no more forks after Ctrl-C; the ones that finished stay its measurement.
INTERRUPTED = "interrupted (Ctrl-C)"


class WorkerError(Exception):
    """A failure the worker understood; its message is meant for the user as it is. ``ended``: where
    the worker's process died, how (its exit status, what it printed), for an engine to read its
    crash report from (engines.jvm.why_failed)."""

    def __init__(self, message: str | None, ended: ChildOutcome | None = None):
        super().__init__(message)
        self.ended = ended


@dataclass
class ChildOutcome:
    result: dict | None  # None when the child died before writing one
    returncode: int
    stdout: str
    stderr: str
    stopped: str = ""  # why the parent stopped a child that gave no sign of progress in time

    @classmethod
    def interrupted(cls) -> ChildOutcome:
        """A fork Ctrl-C cut short: what a part that got no more forks failed with."""
        return cls(result={"error": INTERRUPTED}, returncode=-signal.SIGINT, stdout="", stderr="")

    @property
    def error(self) -> str | None:
        """One line saying why no result came back, or None when one did."""
        if self.stopped:
            return self.stopped
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
    """Ctrl-C while a child ran; ``result`` is what the child had saved by then (worker.each_part
    saves every finished part), or None."""

    def __init__(self, result: dict | None):
        super().__init__()
        self.result = result


# What a child may take to start (a JVM through JPype on a busy 2-core machine takes 1-3 s) before
# its first part's own allowance begins.
START_SECONDS = 20.0
# Checked this often: how soon a child that finished is collected, and a hung one noticed.
_POLL_SECONDS = 0.2
OnHang = Callable[[int], str]  # given the hung child's pid, what was saved of it (a thread dump's path)
# How long a hung child is given to write its Python stacks (faulthandler writes them at once).
_DUMP_SECONDS = 0.2


def run_child(module: str, request: Mapping, env: Mapping[str, str] | None = None,
              allowances: list[float] | None = None, on_hang: OnHang | None = None) -> ChildOutcome:
    """Run ``python -m module`` with ``request`` and collect what it reported. With
    ``allowances`` (seconds per part of the request, see worker.each_part), a child that has not
    saved part i within START_SECONDS (for the first) plus allowance i after the one before is stopped:
    ``on_hang`` first records what it can (a JVM's threads), and the outcome says why it stopped."""
    with tempfile.TemporaryDirectory(prefix="jvmbridge-") as scratch:
        result_path = os.path.join(scratch, "result.json")
        process = launch(python_command(module, result_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace", env=env)
        watch = _Progress(result_path, allowances)
        message: str | None = json.dumps(request)
        try:
            while True:
                try:
                    stdout, stderr = process.communicate(message, timeout=_POLL_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    message = None  # sent once; communicate keeps reading what the child prints
                    if watch.overdue():
                        stopped = watch.why(process.pid, on_hang)
                        process.send_signal(signal.SIGUSR1)  # worker.serve's faulthandler: its stacks
                        time.sleep(_DUMP_SECONDS)
                        process.kill()
                        remove_jvm_files(process.pid)  # before the reap: the pid is still this child's
                        stdout, stderr = process.communicate()
                        stopped += hung_at(stderr)
                        return ChildOutcome(result=_load(result_path), returncode=process.returncode, stdout=stdout,
                                            stderr=stderr, stopped=stopped)
            # Inside the try: a Ctrl-C once the child has ended still hands on what it saved.
            return ChildOutcome(result=_load(result_path), returncode=process.returncode, stdout=stdout, stderr=stderr)
        except KeyboardInterrupt:  # stop the child; its saved parts still count
            process.kill()
            remove_jvm_files(process.pid)
            process.wait()
            raise Interrupted(_load(result_path)) from None


def hung_at(stderr: str) -> str:
    """Where the main thread of a hung child was, from faulthandler's dump of its stacks at the
    end of ``stderr`` ("" without one): it lists the newest thread first, so the main one last,
    and each thread's innermost frame first."""
    threads = list(re.finditer(r"^(Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):$", stderr, re.M))
    frame = re.search(r"^ +File (.+)$", stderr[threads[-1].end():], re.M) if threads else None
    return f"; its main thread was at {frame[1]}" if frame else ""


class _Progress:
    """A child's progress, as the parts in its saved result, against the allowance of each part."""

    def __init__(self, result_path: str, allowances: list[float] | None):
        self.path, self.allowances = result_path, allowances or []
        self.saved, self.since, self.changed = 0, time.monotonic(), -1

    def overdue(self) -> bool:
        if not self.allowances:
            return False
        try:
            changed = os.stat(self.path).st_mtime_ns
        except FileNotFoundError:
            changed = -1
        if changed != self.changed:
            self.changed = changed
            saved = len((_load(self.path) or {}).get("parts", []))
            if saved != self.saved:
                self.saved, self.since = saved, time.monotonic()
        if self.saved >= len(self.allowances):
            return False  # every part is in: what is left is the child's exit
        return time.monotonic() - self.since > self.allowed()

    def allowed(self) -> float:
        return self.allowances[self.saved] + (START_SECONDS if self.saved == 0 else 0)

    def why(self, pid: int, on_hang: OnHang | None) -> str:
        said = f"no progress within {self.allowed():.3g} s (the deadline its budget gives): stopped"
        if on_hang:
            said += f"; {on_hang(pid)}"
        return said


def _load(result_path: str) -> dict | None:
    if not os.path.exists(result_path):
        return None
    with open(result_path) as f:
        return json.load(f)


def fork_rounds(outcomes: list[ChildOutcome]) -> list[list[dict]]:
    """Each fork's timed rounds, in run order: the samples of one configuration, by fork."""
    return [outcome.answer["rounds"] for outcome in outcomes]


def fork_seconds(outcomes: list[ChildOutcome]) -> list[float]:
    """Each fork's share of its child's wall time (start-up, warm-up, rounds): what one more fork of
    this part costs (jvmbridge.comparison.dimensioning); 0 for one cut short by Ctrl-C."""
    return [outcome.answer.get("fork_seconds", 0.0) for outcome in outcomes]


def fork_turns(outcomes: list[ChildOutcome]) -> list[int]:
    """The turn each fork ran in (run_forks): forks of arms run in turns pair up by it."""
    return [outcome.answer["fork_turn"] for outcome in outcomes]


def fork_warmups(outcomes: list[ChildOutcome]) -> list[list[float]]:
    """Each fork's warm-up chunks (ns/op), in run order, for where it settled (jvmbridge.stats.steady)."""
    return [outcome.answer["warmup"]["chunks"] for outcome in outcomes]


@dataclass(frozen=True)
class Arm:
    """One configuration's children: what each starts with (the request, its environment), the
    parts each measures (workloads, see worker.each_part), how each part is sampled and the seconds
    each may take (run_child). A job measuring several arms runs them in turns (run_forks)."""
    request: Mapping
    parts: Sequence[Mapping[str, object]]
    samplings: Sequence[Sampling]
    env: Mapping[str, str] | None = None
    allowances: Sequence[float] | None = None


def run_forks(module: str, arms: Sequence[Arm], on_hang: OnHang | None = None) -> list[Forks]:
    """Fresh children, as JMH's forks, until each part (a workload the child measures, see
    worker.each_part) has the forks its sampling wants: run-to-run variation (JIT decisions, memory
    layout) shows up in the spread. One child measures every part of its arm that still wants a
    fork, in an order of its own per fork, so no part always runs first or last, and start-up is
    paid once. Several arms (AES-NI on and off, measuring the same parts) run in turns: each turn
    one child of each arm, in an order of its own per turn, so a host that slows for a while slows
    both sides of their ratio alike (benchmarks/fork_drift.py); a part runs as many
    forks as its counterparts in the other arms (sampling.policy.forks_wanted's ``together``), so
    every turn pairs them. Each part's outcomes carry the child's shared fields beside its own, and the
    turn ("fork_turn") it ran in.

    A part that failed gets no more forks; what it finished before is kept. A child that died
    during a part (a JVM's SIGSEGV) fails that part only: the parts it finished before count, the
    ones it had not reached go on in the next fork. One that died before any part (or refused the
    request) fails every part it held. Ctrl-C ends the forks the same way: the parts the child
    under way had finished count, the others fail as interrupted (the caller stops after this).
    With an arm's ``allowances`` (seconds per part), a child that makes no progress in time is
    stopped (run_child): the part it was on fails with the reason, the others go on. Per part, arm
    after arm: its Forks."""
    if len({len(arm.parts) for arm in arms}) > 1:
        raise ValueError("arms run in turns measure the same parts")
    ledger = _Ledger(arms)
    try:
        for turn, order, wants in turns(len(arms), ledger.wanted):
            for side in order:
                pending = ledger.pending(arms[side], wants)
                if pending:
                    random.Random(f"{turn}/{side}").shuffle(pending)  # the child's parts, in an order of its own
                    ledger.run(module, arms[side], pending, turn, on_hang)
    except KeyboardInterrupt:  # in a child or between two: every part still short of its forks says so
        ledger.interrupted()
    return ledger.forks()


class _Ledger:
    """run_forks' account of every part of every arm (arm after arm): its sampling, the forks it
    finished and the outcome that failed it, if one did."""

    def __init__(self, arms: Sequence[Arm]):
        self.owners = [(arm, index) for arm in arms for index in range(len(arm.parts))]
        self.samplings = [arm.samplings[index] for arm, index in self.owners]
        self.done: list[list[ChildOutcome]] = [[] for _ in self.owners]
        self.failed: list[ChildOutcome | None] = [None] * len(self.owners)

    def wanted(self) -> list[bool]:
        """Per part, whether it wants another fork (sampling.policy.forks_wanted, arms' parts together)."""
        return forks_wanted(self.samplings, [fork_rounds(d) for d in self.done], [fork_warmups(d) for d in self.done],
                            [f is not None for f in self.failed], [index for _, index in self.owners],
                            [fork_turns(d) for d in self.done])

    def pending(self, arm: Arm, wants: list[bool]) -> list[int]:
        """The parts of ``arm`` that want a fork this turn."""
        return [i for i, (owner, _) in enumerate(self.owners) if owner is arm and wants[i]]

    def run(self, module: str, arm: Arm, pending: list[int], turn: int, on_hang: OnHang | None) -> None:
        """One child of ``arm`` measuring the ``pending`` parts, in that order; what it finished is
        kept, the part it died or was stopped in fails, and all of them if it gave no answer."""
        indices = [self.owners[i][1] for i in pending]
        started = time.monotonic()
        try:
            outcome = run_child(module, {**arm.request, "parts": [arm.parts[i] for i in indices]}, arm.env,
                                [arm.allowances[i] for i in indices] if arm.allowances else None, on_hang)
        except Interrupted as stop:  # what the child finished counts; then as any Ctrl-C (run_forks)
            self._take(pending, ChildOutcome(result=stop.result, returncode=-signal.SIGINT, stdout="", stderr=""), turn)
            raise
        with _ctrl_c_deferred():  # a Ctrl-C now would lose the forks the child finished: it waits for their booking
            answers = self._take(pending, outcome, turn, time.monotonic() - started)
            if answers is None:
                for i in pending:
                    self.failed[i] = outcome
            elif len(answers) < len(pending):  # it died measuring this one
                self.failed[pending[len(answers)]] = replace(outcome, result=None)

    def _take(self, pending: list[int], outcome: ChildOutcome, turn: int, seconds: float = 0.0) -> list[dict] | None:
        """Each answer the child gave to its part, kept or failed; the answers (None: none came back).
        ``seconds``: the child's wall time, shared among its parts as each one's fork_seconds."""
        answers = (outcome.result or {}).get("parts")
        shared = {k: v for k, v in (outcome.result or {}).items() if k != "parts"}
        shared.update(fork_seconds=seconds / len(pending), fork_turn=turn)
        for i, answer in zip(pending, answers or []):
            each = replace(outcome, result={**shared, **answer}, stopped="")
            if each.error:
                self.failed[i] = each
            else:
                self.done[i].append(each)
        return answers

    def interrupted(self) -> None:
        """Ctrl-C: every part still short of its forks (wanted) fails as interrupted."""
        for i, wants in enumerate(self.wanted()):
            if self.failed[i] is None and wants:
                self.failed[i] = ChildOutcome.interrupted()

    def forks(self) -> list[Forks]:
        return [Forks(finished, failure) for finished, failure in zip(self.done, self.failed)]


@contextlib.contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """SIGINT held back for the block and raised as KeyboardInterrupt after it (where this is the
    main thread, the only one Python gives signals to)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, _: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def turns(sides: int, wanted: Callable[[], list[bool]]) -> Iterator[tuple[int, list[int], list[bool]]]:
    """Turn after turn while ``wanted()`` (sampling.policy.forks_wanted, asked before each turn)
    has a part that wants a fork: the turn's number, its sides (arms, settings) in an order drawn for
    it, and what was wanted. Seeded by the turn, so a run's orders can be told again."""
    for turn in itertools.count():
        wants = wanted()
        if not any(wants):
            return
        order = list(range(sides))
        random.Random(turn).shuffle(order)
        yield turn, order, wants


def remove_jvm_files(pid: int) -> None:
    """Remove what a HotSpot JVM in process ``pid`` leaves in /tmp unless it exits of itself: its
    perf data, /tmp/hsperfdata_<user>/<pid> (/tmp whatever TMPDIR says, as HotSpot on Linux does),
    and the attach socket /tmp/.java_pid<pid> an attach made it open. Only in this user's own
    hsperfdata folder, not through a link: a folder of that name is anyone's to make in /tmp."""
    Path(f"/tmp/.java_pid{pid}").unlink(missing_ok=True)
    try:
        folder = os.open(f"/tmp/hsperfdata_{pwd.getpwuid(os.geteuid()).pw_name}",
                         os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except (OSError, KeyError):  # none (no JVM ran, or -XX:-UsePerfData), a link, or a user without a name
        return
    try:
        if os.fstat(folder).st_uid == os.geteuid():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(pid), dir_fd=folder)
    finally:
        os.close(folder)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
