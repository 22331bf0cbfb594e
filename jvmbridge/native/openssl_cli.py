"""The `openssl speed` C loop: OpenSSL's own figure with no Python in the timed path.

`openssl speed -evp` calls EVP_EncryptUpdate on a preallocated buffer of the message size, with
no per-message init or padding: a stream figure, the floor a per-message loop can approach.
"""
from __future__ import annotations

import re
import resource
import subprocess
import time

from jvmbridge.forks.measure import steal_ns
from jvmbridge.forks.parent import WorkerError

# -mr writes, on stderr, "+DT:<cipher>:<seconds>:<size>" as it starts a size and then
# "+R:<operations>:<cipher>:<seconds>" (with -multi N, one such pair from each of the N processes).
_LINE = re.compile(r"^\+DT:[^:]+:\d+:(\d+)\s*$|^\+R:(\d+):([^:]+):([0-9.]+)\s*$", re.MULTILINE)


def describe(openssl: str, env: dict[str, str]) -> dict:
    """Version text and CPUINFO line of the `openssl` command under ``env``."""
    done = _run([openssl, "version", "-v", "-c"], env)
    lines = done.stdout.splitlines()
    cpuinfo = next((line for line in lines if line.startswith("CPUINFO")), "")
    return {"openssl_version": lines[0].strip() if lines else "unknown", "cpuinfo": cpuinfo}


def speed_command(openssl: str, cipher: str, message_bytes: int, seconds: int,
                  extra: tuple[str, ...] = (), processes: int = 1) -> list[str]:
    """One size's run. ``extra`` goes before -evp: -provider NAME or -engine ID for another implementation."""
    multi = ("-multi", str(processes)) if processes > 1 else ()
    return [openssl, "speed", "-elapsed", "-mr", "-seconds", str(seconds), *multi, "-bytes", str(message_bytes),
            *extra, "-evp", cipher]


def speed_rounds(command: list[str], env: dict[str, str], processes: int = 1) -> dict[int, dict]:
    """One timed round of ``command`` (a speed_command) per size it ran: operations done in how many
    nanoseconds, all ``processes`` together (their rates summed, as `-multi` does). A run of one
    size in one process also says what its process shows: its CPU time and the time it spent off
    the CPU (wall time less CPU time, its start included) as wait_ns; every run the host's steal."""
    before, started, stolen = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter_ns(), steal_ns()
    done = _run(command, env)
    wall, stolen, after = time.perf_counter_ns() - started, steal_ns() - stolen, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = round((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e9)
    results: dict[int, list[tuple[int, float]]] = {}
    size = None
    for match in _LINE.finditer(done.stderr):
        if match[1]:
            size = int(match[1])
        elif size is not None:
            results.setdefault(size, []).append((int(match[2]), float(match[4])))
    if not results or any(len(each) != processes for each in results.values()):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        got = ", ".join(f"{len(each)} of {processes} results for {size} bytes" for size, each in results.items())
        raise WorkerError(f"openssl speed gave {got or 'no result'} (exit {done.returncode}): {last}")
    alone = len(results) == 1 and processes == 1
    counters = {"cpu_ns": cpu, "wait_ns": max(0, wall - cpu)} if alone else {}
    return {size: {**_summed(each), **counters, "steal_ns": stolen} for size, each in results.items()}


def _summed(results: list[tuple[int, float]]) -> dict:
    operations = sum(count for count, _ in results)
    rate = sum(count / seconds for count, seconds in results)
    return {"iterations": operations, "ns": round(operations / rate * 1e9)}


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    deadline = _deadline(command)
    try:
        return subprocess.run(command, capture_output=True, text=True, env=env, errors="replace", timeout=deadline)
    except OSError as e:
        raise WorkerError(f"{command[0]}: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise WorkerError(f"{' '.join(command[:2])} gave no answer within {deadline:.0f} s: stopped") from None


def _deadline(command: list[str]) -> float:
    """How long a command may take before it is taken to hang: `speed -seconds N -bytes B` runs N
    seconds, taken three times over; anything else 30 s."""
    if "-seconds" not in command:
        return 30.0
    return 30.0 + 3 * float(command[command.index("-seconds") + 1])
