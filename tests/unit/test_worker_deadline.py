"""A worker that stops answering is stopped at the deadline its command gives, with what could be
saved of it first: a real worker process (a Python one that hangs on purpose; no JVM)."""
from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from jvmbridge.conductor import slices
from jvmbridge.forks.parent import WorkerError

# A worker on jvmbridge's own main (conductor.slices.serve) whose loop never returns.
HANGS_IN_A_SLICE = """
    import time
    from jvmbridge.conductor.slices import Loop, serve

    def hang(n):
        time.sleep(3600)

    serve(lambda request: ({"hangs": True}, [Loop(run=hang, evidence=dict)]))
"""


def test_a_worker_that_hangs_in_a_slice_is_stopped_at_its_deadline_with_what_was_saved_of_it(tmp_path, monkeypatch):
    (tmp_path / "hanging_worker.py").write_text(textwrap.dedent(HANGS_IN_A_SLICE))
    # Run as a script of this folder, importing this tree's jvmbridge.
    monkeypatch.setattr(slices, "python_command",
                        lambda module, *arguments: [sys.executable, str(tmp_path / f"{module}.py"), *arguments])
    monkeypatch.setattr(slices, "GRACE_SECONDS", 0.5)
    env = {**os.environ, "PYTHONPATH": str(Path(slices.__file__).parents[2])}
    seen: list[int] = []
    worker = slices.WorkerProcess("hanging_worker", {}, env, on_hang=lambda pid: seen.append(pid) or f"dump of {pid}")
    assert worker.ready() == {"hangs": True}
    with pytest.raises(WorkerError) as stopped:
        worker.slice(0, 1, 0.01)
    assert str(stopped.value) == f"hanging_worker gave no answer within 0.6 s: stopped; dump of {seen[0]}"
    with pytest.raises(ProcessLookupError):
        os.kill(seen[0], 0)  # killed and reaped: nothing left behind


# A worker whose loop runs in two forked copies (--threads 2) and that ends as serve does, with os._exit.
EXITS_WITH_COPIES = """
    import multiprocessing, os, time
    from jvmbridge.forks.measure import in_processes

    context = in_processes(lambda n: time.sleep(0.001 * n) or 1, 2)
    run = context.__enter__()
    run(10)
    print(" ".join(str(copy.pid) for copy in multiprocessing.active_children()), flush=True)
    os._exit(0)
"""


def test_a_workers_loop_copies_end_with_it(tmp_path):
    import signal
    import subprocess
    import time

    env = {**os.environ, "PYTHONPATH": str(Path(slices.__file__).parents[2])}
    with open(tmp_path / "said", "w+") as said:  # not a pipe: copies left running would hold it open
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(EXITS_WITH_COPIES)], stdout=said,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=60)
        said.seek(0)
        copies = [int(pid) for pid in said.read().split()]
    try:
        assert len(copies) == 2, done.stderr
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in copies) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in copies)
    finally:  # nothing left behind, whatever the outcome
        for pid in filter(_alive, copies):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"  # a zombie has ended, its parent (init) to reap it
    except FileNotFoundError:
        return False
