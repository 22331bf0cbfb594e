"""The `openssl speed` C loop: OpenSSL's own figure with no Python in the timed path.

`openssl speed -evp` calls EVP_EncryptUpdate on a preallocated buffer of the message size, with
no per-message init or padding: a stream figure, the floor a per-message loop can approach.
"""
from __future__ import annotations

import re
import subprocess

from jvmbridge.child import WorkerError

# -mr writes "+R:<operations>:<cipher>:<seconds>" on stderr for each size it ran.
_RESULT = re.compile(r"^\+R:(\d+):([^:]+):([0-9.]+)\s*$", re.MULTILINE)


def describe(openssl: str, env: dict[str, str]) -> dict:
    """Version text and CPUINFO line of the `openssl` command under ``env``."""
    done = _run([openssl, "version", "-v", "-c"], env)
    lines = done.stdout.splitlines()
    cpuinfo = next((line for line in lines if line.startswith("CPUINFO")), "")
    return {"openssl_version": lines[0].strip() if lines else "unknown", "cpuinfo": cpuinfo}


def speed_command(openssl: str, cipher: str, message_bytes: int, seconds: int,
                  extra: tuple[str, ...] = ()) -> list[str]:
    """``extra`` goes before -evp: -provider NAME or -engine ID for another implementation."""
    return [openssl, "speed", "-elapsed", "-mr", "-seconds", str(seconds),
            "-bytes", str(message_bytes), *extra, "-evp", cipher]


def speed_round(command: list[str], env: dict[str, str]) -> dict:
    """One timed round of ``command`` (a speed_command): operations done in how many nanoseconds."""
    done = _run(command, env)
    match = _RESULT.search(done.stderr)
    if not match:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise WorkerError(f"openssl speed gave no result (exit {done.returncode}): {last}")
    return {"iterations": int(match[1]), "ns": round(float(match[3]) * 1e9)}


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, capture_output=True, text=True, env=env, errors="replace")
    except OSError as e:
        raise WorkerError(f"{command[0]}: {e.strerror}") from None
