"""The `openssl speed` C loop: OpenSSL's own stream figure (EVP updates into a preallocated buffer,
no per-message init or padding), with no Python in the timed path."""
from __future__ import annotations

import contextlib
import math
import os
import re
import resource
import signal
import subprocess
import time

from jvmbridge.forks.measure import Counted, on_cpus, run_queue_wait_ns, schedstat, steal_ns
from jvmbridge.forks.parent import WorkerError
from jvmbridge.trust.bounded import read_by
from jvmbridge.trust.launch import launch, run

# -mr's stderr: "+DT:<cipher>:<seconds>:<size>" at a size's start, then "+R:<ops>:<cipher>:<seconds>"
# per process. Every part stays inside its line, so matching is linear.
_LINE = re.compile(r"^\+DT:[^:\n]+:\d+:(\d+)[^\S\n]*$|^\+R:(\d+):([^:\n]+):([0-9.]+)[^\S\n]*$", re.MULTILINE)


def describe(openssl: str, env: dict[str, str]) -> dict:
    """Version text and CPUINFO line of the `openssl` command under ``env``."""
    done = _run([openssl, "version", "-v", "-c"], env)
    lines = done.stdout.splitlines()
    cpuinfo = next((line for line in lines if line.startswith("CPUINFO")), "")
    return {"openssl_version": lines[0].strip() if lines else "unknown", "cpuinfo": cpuinfo}


def speed_command(openssl: str, cipher: str, message_bytes: int, seconds: int,
                  extra: tuple[str, ...] = (), processes: int = 1) -> list[str]:
    """One size's run; ``extra`` before -evp (-provider NAME, -engine ID)."""
    multi = ("-multi", str(processes)) if processes > 1 else ()
    return [openssl, "speed", "-elapsed", "-mr", "-seconds", str(seconds), *multi, "-bytes", str(message_bytes),
            *extra, "-evp", cipher]


def speed_rounds(command: list[str], env: dict[str, str], processes: int = 1) -> dict[int, dict]:
    """One timed round per size of ``command``: operations and ns of all ``processes`` (rates summed,
    as -multi). One size in one process adds its CPU time and wait (wall less CPU); always steal."""
    before, started, stolen = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter_ns(), steal_ns()
    done = _run(command, env)
    wall, stolen, after = time.perf_counter_ns() - started, steal_ns() - stolen, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = round((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e9)
    results = _results_by_size(done.stderr)
    if not results or any(len(each) != processes for each in results.values()):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        got = ", ".join(f"{len(each)} of {processes} results for {size} bytes" for size, each in results.items())
        raise WorkerError(f"openssl speed gave {got or 'no result'} (exit {done.returncode}): {last}")
    alone = len(results) == 1 and processes == 1
    counters = {"cpu_ns": cpu, "wait_ns": max(0, wall - cpu)} if alone else {}
    return {size: {**_summed(each), **counters, "steal_ns": stolen} for size, each in results.items()}


def _results_by_size(stderr: str) -> dict[int, list[tuple[int, float]]]:
    """Each size's (operations, seconds), one per process, from the -mr lines of ``stderr``."""
    results: dict[int, list[tuple[int, float]]] = {}
    size = None
    for match in _LINE.finditer(stderr):
        if match[1]:
            size = int(match[1])
        elif size is not None:
            results.setdefault(size, []).append((int(match[2]), float(match[4])))
    return results


def stopped_run(command: list[str], seconds: float, wait_on: set[int] | None = None) -> Counted:
    """_stopped_once, rerun (twice at most) where its count cannot stand for the slice: no operation
    counted, or the loop ran past a signal that came before speed armed its alarm."""
    for _ in range(3):
        done = _stopped_once(command, seconds, wait_on)
        if done is not None:
            return done
    raise WorkerError(f"openssl speed gave no count of a {seconds:g} s slice in three runs: "
                      "it did no operation, or ran on past the signal that ends its loop")


# Speed's clock ticks 10 ms and it may see the signal late: beyond this the signal is taken as lost.
_LOST_SIGNAL_SECONDS = 0.5


def _stopped_once(command: list[str], seconds: float, wait_on: set[int] | None = None) -> Counted | None:
    """``command`` (one size, one process) stopped by SIGALRM after about ``seconds``, timed here from
    its start line (its own clock ticks 10 ms, a fifth of a slice). ``wait_on``: the vCPUs this thread
    waits on, off the loop's. None where the count cannot stand for the slice."""
    try:  # started from this thread, on its vCPUs
        process = launch(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=os.environ)  # this worker's own: its parent's launcher built it, with OpenSSL's mask
    except OSError as e:
        raise WorkerError(f"{command[0]}: {e.strerror}") from None
    child = f"/proc/{process.pid}/schedstat"
    try:
        with on_cpus(wait_on):
            waited = run_queue_wait_ns()  # after the move, which costs a wait of its own
            said = _line_starting("+DT:", process, 30.0)
            began = time.perf_counter_ns() - (run_queue_wait_ns() - waited)
            before, stolen = schedstat(child), steal_ns()
            time.sleep(seconds)
            after, stolen, ended = schedstat(child), steal_ns() - stolen, time.perf_counter_ns()
            process.send_signal(signal.SIGALRM)
            said += _line_starting("+R:", process, 30.0)
    finally:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=5)
        if process.poll() is None:
            process.kill()
            process.wait()
    match = next((m for m in _LINE.finditer(said) if m[2]), None)
    if match is None or ended - began > 1e9 * float(command[command.index("-seconds") + 1]):
        raise WorkerError(f"openssl speed stopped before it was told (exit {process.returncode}): {said.strip()[-200:]}")
    if int(match[2]) == 0 or float(match[4]) > (ended - began) / 1e9 + _LOST_SIGNAL_SECONDS:
        return None
    return Counted(operations=int(match[2]), ns=ended - began,
                   counters={"cpu_ns": after[0] - before[0], "wait_ns": after[1] - before[1], "steal_ns": stolen})


def seconds_beyond(seconds: float) -> int:
    """Whole seconds to ask of a run stopped after ``seconds``: its own alarm comes later, and ends it
    soon after a killed worker (forking to die with the parent disturbed 40% of slices, not 5-16%)."""
    return math.ceil(seconds) + 2


def _line_starting(prefix: str, process: subprocess.Popen, deadline_seconds: float) -> str:
    """``process``'s stderr up to the end of a line starting with ``prefix``, each line looked at once."""
    assert process.stderr is not None
    said, deadline, line = bytearray(), time.monotonic() + deadline_seconds, 0  # `line`: where the next one starts
    while True:
        try:
            chunk = read_by(process.stderr.fileno(), 4096, deadline)
        except TimeoutError:
            raise WorkerError(f"openssl speed wrote no {prefix} line within {deadline_seconds:.0f} s") from None
        if not chunk:
            raise WorkerError(f"openssl speed ended (exit {process.wait()}) before its {prefix} line: "
                              f"{said.decode(errors='replace').strip()[-200:]}")
        found = chunk.find(b"\n")
        end = -1 if found < 0 else len(said) + found
        said += chunk
        while end >= 0:
            if said.startswith(prefix.encode(), line, end):
                return said.decode(errors="replace")
            line, end = end + 1, said.find(b"\n", end + 1)


def _summed(results: list[tuple[int, float]]) -> dict:
    operations = sum(count for count, _ in results)
    rate = sum(count / seconds for count, seconds in results)
    return {"iterations": operations, "ns": round(operations / rate * 1e9)}


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    deadline = _deadline(command)
    try:
        return run(command, capture_output=True, text=True, env=env, errors="replace", timeout=deadline)
    except OSError as e:
        raise WorkerError(f"{command[0]}: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise WorkerError(f"{' '.join(command[:2])} gave no answer within {deadline:.0f} s: stopped") from None


def _deadline(command: list[str]) -> float:
    """Seconds before a command is taken to hang: three times `-seconds N`; anything else 30 s."""
    if "-seconds" not in command:
        return 30.0
    return 30.0 + 3 * float(command[command.index("-seconds") + 1])
