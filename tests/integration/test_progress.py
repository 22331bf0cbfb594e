"""Progress while compare, verify and check run: the runner's updates (on fake engines, fast), the
time-left forecast (fast, on known costs), and the live display of the real CLI on a terminal.

Split by tier: here what needs a process; the rest is in tests/unit/test_progress.py."""
from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time


def _on_a_terminal(arguments: list[str], env: dict | None = None, timeout: float = 600) -> tuple[str, str, int]:
    """Run the CLI with stderr on a pseudo-terminal (as a person at one) and stdout on a pipe: what
    each carried, and the exit code."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "jvmbridge", *arguments], stdout=subprocess.PIPE,
                               stderr=terminal, env={**os.environ, "COLUMNS": "160", **(env or {})})
    os.close(terminal)
    drawn = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            drawn += chunk
        elif process.poll() is not None:
            break
    stdout = process.stdout.read().decode() if process.stdout else ""
    process.wait(timeout=30)
    os.close(controller)
    return stdout, drawn.decode(errors="replace"), process.returncode


def _frames(drawn: str) -> list[str]:
    """The distinct screens the display drew, without terminal controls."""
    pieces = re.split(r"\x1b\[\d*A|\x1b\[\?25l", drawn)
    return list(dict.fromkeys(p for p in (re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", p).strip() for p in pieces) if p))


ELAPSED = r"(\d+ min )?\d+ s"  # a job's time as the display says it: "12 s", "1 min 21 s" on a busy machine

# Each engine's settings in turns (--no-interleave): two jobs, whose lines these tests read. Two forks: a
# job's line shows its fork counting up, and the ratio so far once the first fork is in, while the second runs.
FORKS = 2
COMPARE = ["compare", "--engine", "jvm", "--engine", "c-loop", "--round-time", "0.1", "--rounds", "2",
           "--forks", str(FORKS), "--max-forks", str(FORKS), "--no-interleave", "--shape", "message"]


def test_compare_redraws_each_running_configuration_and_stdout_holds_only_the_document(tmp_path):
    stdout, drawn, code = _on_a_terminal([*COMPARE, "--format", "json", "-o", str(tmp_path / "run.jsonl")],
                                         {"NO_COLOR": "1"})
    assert code == 0, drawn[-2000:]
    document = json.loads(stdout)  # nothing but the document on the pipe
    assert len(document["results"]) == 4
    frames = _frames(drawn)
    redrawn = [f for f in frames if "so far, about" in f]
    assert len(redrawn) >= 8, frames  # redrawn in place as it went, not a line per step
    assert "\x1b[1A" in drawn or "\x1b[2K" in drawn
    # Two jobs, each an engine's settings in turns: the job's line, then its ratio so far, as the conductor's are.
    lines = [line.strip() for f in redrawn for line in f.splitlines()]
    running = [line for line in lines if re.search(rf"^\[\d/2\] +{ELAPSED} .* · fork \d of {FORKS}$", line)]
    assert {re.search(r"\[(\d)/2\]", line).group(1) for line in running} == {"1", "2"}
    for job in ("JVM, each setting in turns", "OpenSSL C loop (jvmbridge), each setting in turns"):
        assert any(job in line for line in running), job
    assert any(re.search(r"^[\d.]+x( ±[\d.]+%)? intrinsics speedup", line) for line in lines)
    # Each finished job with its forks, as the table's rows will show them.
    assert {line for f in frames for line in f.splitlines()
            if re.search(rf"✓ \[1/2\] +{ELAPSED} JVM, each setting in turns · {FORKS} fork\(s\)$", line.strip())}
    assert not re.search(r"\x1b\[[0-9;]*[0-9]m", drawn.replace("\x1b[0m", "").replace("\x1b[?25l", "")), \
        "NO_COLOR: no colours"
    assert "so far, about" not in drawn.split("\n")[-1]  # transient: gone at the end


def test_an_interleaved_compare_shows_its_forks_once_and_its_ratios_as_the_forks_finish(tmp_path):
    # The conductor's way (the default): the C loop's two settings in the same forks, a ratio between them.
    stdout, drawn, code = _on_a_terminal(["compare", "--engine", "c-loop", "--shape", "stream", "--forks", "3",
                                          "--max-forks", "3", "--format", "json", "-o", str(tmp_path / "run.jsonl")],
                                         {"NO_COLOR": "1"})
    assert code == 0, drawn[-2000:]
    (ratio,) = json.loads(stdout)["ratios"]
    lines = [line.strip() for f in _frames(drawn) for line in f.splitlines()]
    assert any(re.search(rf"^\[1/1\] +{ELAPSED} every configuration at once.* · fork 3 of 3$", line) for line in lines)
    assert not [line for line in lines if "AES-NI on · fork" in line]  # not a line per configuration
    # After one fork its ratio alone, after two with its interval: the one the table then prints, within it.
    shown = [re.match(r"([\d.]+)x( ±[\d.]+%)? AES-NI speedup", line) for line in lines]
    figures = [(float(m.group(1)), bool(m.group(2))) for m in shown if m]
    assert {has_interval for _, has_interval in figures} == {False, True}, lines
    assert all(ratio["low"] * 0.9 <= times <= ratio["high"] * 1.1 for times, _ in figures), (figures, ratio)


def test_quiet_and_a_pipe_get_no_progress(tmp_path):
    # A run of seconds (the C loop built, its workers started): on a terminal its progress would be drawn
    # from its first update (test_compare_redraws_... shows it), four times a second.
    quick = ["compare", "--engine", "c-loop", "--shape", "message", "--round-time", "0.05", "--rounds", "1", "--forks", "1",
             "--max-forks", "1", "--no-interleave"]
    _, drawn, code = _on_a_terminal([*quick, "-q", "-o", str(tmp_path / "a.jsonl")])
    assert code == 0 and "so far" not in drawn
    done = subprocess.run([sys.executable, "-m", "jvmbridge", *quick, "-o", str(tmp_path / "b.jsonl")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and "so far" not in done.stderr and "results saved to" in done.stderr


def test_verify_numbers_its_steps_and_times_them():
    _, drawn, code = _on_a_terminal(["verify", "--quick", "--mode", "cbc", "--mode", "ctr", "--jdk-time", "4"])
    assert code == 0, drawn[-2000:]
    frames = _frames(drawn)
    assert any(re.search(rf"\[1/2\] +{ELAPSED} .*CBC, \d+ cases x \d+ call patterns", f) for f in frames), frames
    assert any(re.search(rf"✓ \[1/2\] +{ELAPSED} .*CBC.*\n\s*\[2/2\] +{ELAPSED} .*CTR", f) for f in frames), frames
