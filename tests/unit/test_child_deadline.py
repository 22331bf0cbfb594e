"""A child that stops making progress is stopped at the deadline its budget gives, with what it
finished kept: real child processes (Python ones that hang on purpose; no JVM)."""
from __future__ import annotations

import os
import sys
import textwrap

import pytest

import jvmbridge.forks.parent as parent
from jvmbridge.forks.parent import run_child
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import Operation, Workload

# A worker that answers its first part, saves (as worker.each_part does), then hangs forever.
HANGS_AFTER_ONE_PART = """
    import json, sys, time
    request = json.load(sys.stdin)
    with open(sys.argv[1] + ".partial", "w") as f:
        json.dump({"parts": [{"rounds": [], "part": request["parts"][0]["name"]}]}, f)
    import os; os.replace(sys.argv[1] + ".partial", sys.argv[1])
    while True:
        time.sleep(1)
"""

# A worker on jvmbridge's own main (forks.worker.serve) that hangs in its handler, line 6.
HANGS_IN_ITS_HANDLER = """
    import time
    from jvmbridge.forks.worker import serve

    def handler(request, save):
        time.sleep(3600)

    serve(handler)
"""


@pytest.fixture
def worker(tmp_path, monkeypatch):
    (tmp_path / "hanging_worker.py").write_text(textwrap.dedent(HANGS_AFTER_ONE_PART))
    (tmp_path / "serving_worker.py").write_text(textwrap.dedent(HANGS_IN_ITS_HANDLER))
    monkeypatch.setattr(parent, "START_SECONDS", 0.0)  # the parent's allowance for a start; no JVM here
    # Run as scripts of this folder: run_child's children are isolated (-I), no module on PYTHONPATH is theirs.
    monkeypatch.setattr(parent, "python_command",
                        lambda module, *arguments: [sys.executable, str(tmp_path / f"{module}.py"), *arguments])
    return None  # the launcher's environment


def test_a_hung_child_is_stopped_with_the_part_it_finished_kept(worker):
    seen = []
    outcome = run_child("hanging_worker", {"parts": [{"name": "a"}, {"name": "b"}]}, worker,
                        allowances=[5.0, 0.5], on_hang=lambda pid: seen.append(pid) or f"dump of {pid}")
    assert outcome.result == {"parts": [{"rounds": [], "part": "a"}]}
    assert outcome.error == f"no progress within 0.5 s (the deadline its budget gives): stopped; dump of {seen[0]}"
    with pytest.raises(ProcessLookupError):
        os.kill(seen[0], 0)  # killed and reaped: nothing left behind


def test_a_hung_child_says_where_its_main_thread_was(tmp_path, worker):
    outcome = run_child("serving_worker", {"parts": [{"name": "a"}]}, worker, allowances=[0.5])
    assert outcome.result is None
    where = tmp_path / "serving_worker.py"
    assert outcome.error == ("no progress within 0.5 s (the deadline its budget gives): stopped; its main thread "
                             f'was at "{where}", line 6 in handler')


def test_without_allowances_a_child_is_never_stopped_early(tmp_path, worker):
    (tmp_path / "quick_worker.py").write_text("import json, sys\nopen(sys.argv[1], 'w').write(json.dumps({'ok': 1}))\n")
    outcome = run_child("quick_worker", {}, worker)
    assert outcome.result == {"ok": 1} and outcome.error is None and outcome.stopped == ""


def test_the_allowance_grows_with_what_the_workload_asks():
    quick = Workload(Operation(), Sampling(rounds=5, round_seconds=0.5))
    assert quick.seconds_at_most(15) == pytest.approx(15 + 3 * 5 * 0.5 + 5)
    counted = Workload(Operation(message_bytes=1024), Sampling(iterations=10**8, rounds=5, forks=4))
    assert counted.seconds_at_most(15) == pytest.approx(15 + 3 * 10**8 / 4 * (20e-6 + 50e-9 * 1024) + 5)  # a fork's share
    huge = Workload(Operation(message_bytes=64 << 20), Sampling(rounds=5, round_seconds=0.5))
    assert huge.seconds_at_most(0) > 3 * 5 * 3  # a 64 MiB message outlasts a 0.5 s round
