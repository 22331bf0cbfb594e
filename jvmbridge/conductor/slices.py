"""The conversation between the conductor and a worker process, both sides: JSON-line commands on
stdin, replies on a pipe of their own (a JVM prints what it likes on stdout and stderr)."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from jvmbridge.forks.measure import Activity, RunLoop, Warmup, in_processes, timed_rounds, warm_up
from jvmbridge.forks.parent import ChildOutcome, PartFailed, WorkerError, remove_jvm_files
from jvmbridge.trust.bounded import read_by
from jvmbridge.trust.launch import launch, python_command

# A JVM's start and its provider's set-up may take this long.
START_SECONDS = 60.0
# Beyond a command's expected time: a worker missing it hangs, and is stopped.
GRACE_SECONDS = 20.0


def refused(error: WorkerError) -> Loop:
    """A part whose loop could not be set up: each command to it fails, the worker's others go on."""
    def run(n: int) -> int:
        raise error

    return Loop(run=run, evidence=dict)


@dataclass
class Loop:
    """One part of a worker: its timed loop and what else to read around each slice."""
    run: RunLoop
    evidence: Callable[[], dict]  # what the loop computed, read after the fork's last slice
    activity: Activity | None = None  # moves while what the loop runs still changes (a JVM's JIT, heap)
    counters: dict[str, Activity] = field(default_factory=dict)  # read around each slice (gc_ms, jit_ms)
    # Its own warm-up (min_seconds, max_seconds) -> Warmup, else chunks until steady.
    warm: Callable[[float, float], Warmup] | None = None
    copies: int = 1  # loops that run each slice at once (--threads): its iterations count every copy's
    # Set-up that may hang (a provider's first answer): at the part's first command, under its deadline.
    prepare: Callable[[], None] | None = None


def copies(loop: Loop, threads: int) -> Loop:
    """``loop`` in ``threads`` forked processes at once, as `openssl speed -multi`; itself with one."""
    if threads > 1:
        loop.run = _for_good(in_processes(loop.run, threads))
        loop.copies = threads
    return loop


_HELD: list[contextlib.AbstractContextManager] = []  # a generator's context, collected, would close


def _for_good(context: contextlib.AbstractContextManager):
    """What ``context`` gives, entered for the worker's life (serve ends with os._exit)."""
    _HELD.append(context)
    return context.__enter__()


Opened = tuple[dict, Sequence[Loop]]  # (the worker's identity: versions, flags read back; its parts' loops)


def serve(open_loops: Callable[[dict], Opened], harness_threads: tuple[str, ...] = ()) -> None:
    """A worker's main: ``open_loops`` of stdin's first line, then each command until "finish"."""
    replies = os.fdopen(int(sys.argv[1]), "w", buffering=1)

    def reply(message: dict) -> None:
        replies.write(json.dumps(message) + "\n")

    request = json.loads(sys.stdin.readline())
    status = 0
    try:
        identity, loops = open_loops(request)
        cpus = _Cpus(measuring=request.get("measuring_cpu"), allowed=os.sched_getaffinity(0), harness=harness_threads)
        cpus.pin_this_thread()
        reply({"ready": identity})
        for line in sys.stdin:
            command = json.loads(line)
            if command["do"] == "finish":
                reply({"evidence": [loop.evidence() for loop in loops]})
                break
            if command["do"] == "evidence":  # one part's, at the end of its turn (conduct._turn)
                reply({"evidence": loops[command["part"]].evidence()})
                continue
            if command["do"] == "aside":
                cpus.set_aside(True)
                reply({"aside": True})
                continue
            try:
                reply(_answer(command, loops[command["part"]], cpus))
            except WorkerError as e:  # the part's alone (PartFailed at the parent's end): the others go on
                reply({"error": str(e), "part": command["part"]})
    except WorkerError as e:
        reply({"error": str(e)})
        status = 1
    replies.close()
    sys.stdout.flush()
    # os._exit: a JVM's shutdown can hang or crash once the replies are sent.
    remove_jvm_files(os.getpid())
    os._exit(status)


def _answer(command: dict, loop: Loop, cpus: _Cpus) -> dict:
    if loop.prepare is not None:
        loop.prepare()
        loop.prepare = None
    if command["do"] == "warm":  # where the worker is: aside if told so (serve), else in place
        if loop.warm is not None:
            return {"warmup": loop.warm(command["min_seconds"], command["max_seconds"]).as_dict()}
        return {"warmup": warm_up(loop.run, command["min_seconds"], command["max_seconds"], loop.activity,
                                  in_this_thread=loop.copies == 1).as_dict()}
    cpus.set_aside(False)
    (slice_,) = timed_rounds(loop.run, [command["iterations"]], loop.copies, loop.counters)
    return {"slice": slice_}


class _Cpus:
    """Where a worker's threads run: the measuring vCPU (None: unpinned), the others, and its harness's."""

    def __init__(self, measuring: int | None, allowed: set[int], harness: tuple[str, ...] = ()):
        self.measuring, self.allowed, self.harness, self.away = measuring, allowed, harness, False

    def pin_this_thread(self) -> None:
        """Pin the measuring thread, once set up. Linux applies it to threads started later too:
        pinned before a JVM's start, the JVM saw one processor and chose Serial GC where G1 runs
        here. The harness's threads go to the other vCPUs first."""
        if self.measuring is None:
            return
        if others := self.allowed - {self.measuring}:
            self._move_harness(others)
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {self.measuring})

    def _move_harness(self, cpus: set[int]) -> None:
        if not self.harness:
            return
        for thread in os.listdir("/proc/self/task"):
            with contextlib.suppress(OSError):  # it ended meanwhile
                with open(f"/proc/self/task/{thread}/comm") as comm:
                    if comm.read().strip() in self.harness:
                        os.sched_setaffinity(int(thread), cpus)

    def set_aside(self, aside: bool) -> None:
        """Every thread off the measuring vCPU (readied while the fork before times there), or back.
        The JVM sized its GC and compiler threads at its start; moving them later changes neither."""
        others = self.allowed - {self.measuring}
        if self.measuring is None or not others or aside == self.away:
            return
        _move_every_thread(others if aside else self.allowed)
        if not aside:
            self.pin_this_thread()
        self.away = aside


def _move_every_thread(cpus: set[int]) -> None:
    """Move every thread of this process to ``cpus``, those started meanwhile too."""
    moved: set[str] = set()
    while threads := set(os.listdir("/proc/self/task")) - moved:
        for thread in threads:
            with contextlib.suppress(OSError):  # it ended meanwhile
                os.sched_setaffinity(int(thread), cpus)
        moved |= threads


class WorkerProcess:
    """The conductor's handle on one worker process, asked one thing at a time."""

    def __init__(self, module: str, request: Mapping, env: Mapping[str, str] | None = None,
                 on_hang: Callable[[int], str] | None = None):
        self.module, self.on_hang = module, on_hang  # on_hang(pid): what was saved of one that hung
        read_end, write_end = os.pipe()
        self.output = tempfile.TemporaryFile("w+")  # the process's own prints (a JVM's warnings)
        self.process = launch(python_command(module, str(write_end)), stdin=subprocess.PIPE, stdout=self.output,
                              stderr=subprocess.STDOUT, text=True, env=env, pass_fds=(write_end,))
        os.close(write_end)
        self.replies = os.fdopen(read_end, "r")
        self._buffer = ""
        self.send(dict(request))

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:  # it died between two commands: why is in what it printed
            self.stop()
            raise self._died() from None

    def ready(self) -> dict:
        """The worker's identity once set up; WorkerError with its reason if it failed."""
        return self._reply(START_SECONDS)["ready"]

    def aside(self) -> None:
        """Every thread off the measuring vCPU until its first slice."""
        self.send({"do": "aside"})
        self._reply(GRACE_SECONDS)

    def warm(self, part: int, min_seconds: float, max_seconds: float) -> dict:
        """Where the process is: aside, or its measuring thread on the measuring vCPU."""
        self.send({"do": "warm", "part": part, "min_seconds": min_seconds, "max_seconds": max_seconds})
        return self._reply(max_seconds + GRACE_SECONDS)["warmup"]

    def slice(self, part: int, iterations: int, expected_seconds: float) -> dict:
        self.send({"do": "slice", "part": part, "iterations": iterations})
        return self._reply(10 * expected_seconds + GRACE_SECONDS)["slice"]

    def evidence(self, part: int) -> dict:
        """What ``part``'s loop computed so far."""
        self.send({"do": "evidence", "part": part})
        return self._reply(GRACE_SECONDS)["evidence"]

    def finish(self) -> list[dict]:
        """Each part's evidence; the process then exits."""
        self.send({"do": "finish"})
        evidence = self._reply(GRACE_SECONDS)["evidence"]
        self.stop()
        return evidence

    def ended(self) -> ChildOutcome:
        """How the stopped process ended: exit status and its stdout and stderr."""
        self.output.seek(0)
        return ChildOutcome(result=None, returncode=self.process.returncode, stdout=self.output.read(), stderr="")

    def stop(self) -> None:
        """End the process and its JVM's leftovers: stdin closed ends an idle worker; a busy one is killed."""
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            if self.process.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=1)
        finally:  # Ctrl-C during the polite wait: killed all the same
            if self.process.poll() is None:
                self.process.kill()
                remove_jvm_files(self.process.pid)  # before the reap: the pid is still this process's
                self.process.wait()
            self.replies.close()

    def _reply(self, seconds: float) -> dict:
        deadline = time.monotonic() + seconds
        while "\n" not in self._buffer:
            try:
                chunk = read_by(self.replies.fileno(), 65536, deadline).decode()
            except TimeoutError:
                saved = f"; {self.on_hang(self.process.pid)}" if self.on_hang else ""
                self.stop()
                stopped = f"{self.module} gave no answer within {seconds:.3g} s: stopped{saved}"
                raise WorkerError(stopped, replace(self.ended(), stopped=stopped)) from None
            if not chunk:  # the process ended without a reply: what it printed last says why
                self.stop()
                raise self._died()
            self._buffer += chunk
        line, self._buffer = self._buffer.split("\n", 1)
        message = json.loads(line)
        if "part" in message:
            raise PartFailed(message["error"])
        if "error" in message:
            self.stop()
            raise WorkerError(message["error"], replace(self.ended(), result={"error": message["error"]}))
        return message

    def _died(self) -> WorkerError:
        """The worker's end as an error: exit status and last line, the whole output kept beside."""
        ended = self.ended()
        lines = [line.strip() for line in ended.stdout.splitlines() if line.strip()]
        said = f": {lines[-1][:200]}" if lines else ""
        return WorkerError(f"the worker exited (status {ended.returncode}){said}", ended)
