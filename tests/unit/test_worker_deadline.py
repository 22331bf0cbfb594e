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
