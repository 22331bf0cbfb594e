"""The `openssl speed` C loop: OpenSSL's own figure with no Python in the timed path.

`openssl speed -evp` calls EVP_EncryptUpdate on a preallocated buffer of the message size, with
no per-message init or padding: a stream figure, the floor a per-message loop can approach.
"""
from __future__ import annotations

import re
import subprocess

from jvmbridge.child import WorkerError

# -mr writes "+R:<operations>:<cipher>:<seconds>" on stderr for each size it ran (with -multi N,
# one such line from each of the N processes).
_RESULT = re.compile(r"^\+R:(\d+):([^:]+):([0-9.]+)\s*$", re.MULTILINE)


def describe(openssl: str, env: dict[str, str]) -> dict:
    """Version text and CPUINFO line of the `openssl` command under ``env``."""
    done = _run([openssl, "version", "-v", "-c"], env)
    lines = done.stdout.splitlines()
    cpuinfo = next((line for line in lines if line.startswith("CPUINFO")), "")
    return {"openssl_version": lines[0].strip() if lines else "unknown", "cpuinfo": cpuinfo}


def speed_command(openssl: str, cipher: str, message_bytes: int, seconds: int,
                  extra: tuple[str, ...] = (), processes: int = 1) -> list[str]:
    """``extra`` goes before -evp: -provider NAME or -engine ID for another implementation."""
    multi = ("-multi", str(processes)) if processes > 1 else ()
    return [openssl, "speed", "-elapsed", "-mr", "-seconds", str(seconds), *multi,
            "-bytes", str(message_bytes), *extra, "-evp", cipher]


def speed_round(command: list[str], env: dict[str, str], processes: int = 1) -> dict:
    """One timed round of ``command`` (a speed_command): operations done in how many nanoseconds,
    all ``processes`` together (their rates summed, as `-multi` does)."""
    done = _run(command, env)
    results = [(int(m[1]), float(m[3])) for m in _RESULT.finditer(done.stderr)]
    if len(results) != processes:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        got = f"{len(results)} of {processes} results" if results else "no result"
        raise WorkerError(f"openssl speed gave {got} (exit {done.returncode}): {last}")
    operations = sum(count for count, _ in results)
    rate = sum(count / seconds for count, seconds in results)
    return {"iterations": operations, "ns": round(operations / rate * 1e9)}


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, text=True, env=env, errors="replace")
    except OSError as e:
        raise WorkerError(f"{command[0]}: {e.strerror}") from None
