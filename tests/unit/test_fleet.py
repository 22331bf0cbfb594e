"""The fleet: a real `ansible-playbook` run over real SSH (Debian's sshd on 127.0.0.1 ports, one
per host) against hosts that differ, then the fleet report on what came back.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_fleet.py."""
from __future__ import annotations

import json
import os

import pytest
from helpers import run_cli

from jvmbridge.fleet.report import MAX_DOCUMENT_BYTES

GOOD_HOST = {"jdks": [{"java_home": "/jdk", "version": "17", "options": [],
                       "verdicts": [{"mode": "CTR", "status": "active", "reason": "", "fix": ""}]}], "live_jvms": []}


@pytest.fixture
def hostile_fleet(tmp_path):
    """A saved fleet folder: two good hosts' documents among hostile ones, as hosts of the fleet
    could send back (every host controls its own document)."""
    folder = tmp_path / "fleet"
    folder.mkdir()
    for host in ("web-1", "web-2"):
        (folder / f"{host}.json").write_text(json.dumps({"host": host, **GOOD_HOST}))
    nesting = 100_000
    (folder / "deep.json").write_text('{"host": "deep", "jdks": ' + "[" * nesting + "]" * nesting + "}")
    nulls = {"java_home": None, "version": None, "options": None,
             "verdicts": [{"mode": None, "status": "active", "reason": None, "fix": None}]}
    (folder / "nulls.json").write_text(json.dumps({"host": "nulls", "jdks": [nulls]}))
    (folder / "null-host.json").write_text(json.dumps({"host": None, "jdks": None}))
    with open(folder / "huge.json", "wb") as huge:  # sparse: past the cap without using the disk
        huge.truncate(MAX_DOCUMENT_BYTES + 1)
    (folder / "endless.json").symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo.json")  # no writer: a read of it would wait forever
    return folder


def test_a_hostile_document_makes_its_host_not_checked_and_the_rest_is_reported(hostile_fleet):
    done = run_cli("report", str(hostile_fleet), "--format", "json", timeout=60)
    assert done.returncode == 2 and done.stderr == "", done.stderr
    report = json.loads(done.stdout)
    assert {(row["host"], row["status"]) for row in report["rows"]} == {("web-1", "active"), ("web-2", "active")}
    why = report["unchecked"]
    assert why.keys() == {"deep", "nulls", "null-host", "huge", "endless", "fifo"}
    assert why["deep"].endswith("deep.json: JSON nested deeper than a `check` document ever is")
    assert why["nulls"].endswith("nulls.json: not a complete `jvmbridge check` document ('mode' is null, not text)")
    assert why["null-host"].endswith("null-host.json: not a `jvmbridge check --format json` document")
    assert why["huge"].endswith(f"huge.json: larger than {MAX_DOCUMENT_BYTES >> 20} MiB, more than any `check` document")
    assert why["endless"].endswith("endless.json: not a regular file (a character device)")
    assert why["fifo"].endswith("fifo.json: not a regular file (a FIFO)")
    assert report["summary"].startswith("8 hosts, 2 JDKs and JVMs checked; 6 hosts not checked: ")


def test_the_table_of_a_hostile_fleet_shows_every_host(hostile_fleet):
    done = run_cli("report", str(hostile_fleet), timeout=60)
    assert done.returncode == 2 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines[1:9]] == ["web-1", "web-2", "deep", "endless", "fifo", "huge",
                                                        "null-host", "nulls"]
    assert lines[-1].startswith("8 hosts, 2 JDKs and JVMs checked; 6 hosts not checked: ")


def test_a_host_is_named_by_its_file_never_by_its_document(tmp_path):
    """A host whose document says it is another (`"host": "web-1"`) neither hides itself nor doubles
    web-1: `jvmbridge fleet` saves each host's document as <inventory name>.json, and that is its name."""
    for host, says in (("web-1", "web-1"), ("web-2", "web-1"), ("web-3", "db-9")):
        (tmp_path / f"{host}.json").write_text(json.dumps({"host": says, **GOOD_HOST}))
    done = run_cli("report", str(tmp_path), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["hosts"] == ["web-1", "web-2", "web-3"]
    assert sorted(row["host"] for row in report["rows"]) == ["web-1", "web-2", "web-3"]


def test_one_bad_run_file_makes_its_host_not_checked_and_the_others_are_reported(tmp_path, capsys, monkeypatch):
    """`fleet --compare`'s report of the hosts' runs: a run file that cannot be read (a hostile host's)
    is that host's "no run", said escaped, and every other host's run is still in the report,
    named by its file."""
    from helpers import FakeEngine, workloads

    from jvmbridge.cli.fleet import _compare_report
    from jvmbridge.comparison.runner import plan, run
    from jvmbridge.engines import ENGINES, Matrix

    monkeypatch.setitem(ENGINES, "one", FakeEngine("one", 100.0))
    run(plan(workloads(), Matrix(engines=("one",))), output=tmp_path / "web-1.jsonl")
    (tmp_path / "web-2\x1b[2J.jsonl").write_text("not a run\n")
    with pytest.raises(SystemExit) as exit:
        _compare_report(tmp_path, "json", None, True, [])
    out, err = capsys.readouterr()
    assert exit.value.code == 2
    assert "web-1" in json.dumps(json.loads(out)["comparison"])
    assert err.startswith("jvmbridge: web-2\\x1b[2J: no run (") and "\x1b" not in err, err


def test_a_saved_fleet_reports_as_openmetrics_as_the_docs_say(tmp_path):
    """docs/monitoring.md lists openmetrics for fleets: `report DIR --format openmetrics` gives it too."""
    (tmp_path / "web-1.json").write_text(json.dumps({"host": "web-1", **GOOD_HOST}))
    done = run_cli("report", str(tmp_path), "--format", "openmetrics")
    assert done.returncode == 0 and done.stdout.endswith("# EOF\n"), done.stderr
    assert 'host="web-1"' in done.stdout
    (tmp_path / "run.jsonl").write_text("{}\n")
    runs = run_cli("report", str(tmp_path / "run.jsonl"), "--format", "openmetrics")
    assert runs.returncode == 2 and "openmetrics is a format of a fleet's `check` documents" in runs.stderr


def test_a_host_that_gave_no_document_gets_a_private_note_and_a_fifo_for_its_reason_is_not_waited_on(tmp_path):
    """The play's notes of why a host gave nothing are read as another party's file (a FIFO among them
    once hung the run), and the document written of each is 0600, as every file jvmbridge makes."""
    import stat
    import subprocess
    import sys

    from jvmbridge.fleet.run import RESULTS

    results = tmp_path / RESULTS
    results.mkdir()
    (results / "gone-1").write_text(json.dumps({"unreachable": True, "msg": "Connection refused"}))
    os.mkfifo(results / "stuck-1")
    (results / "web-1").write_text(json.dumps({"failed": True}))
    (tmp_path / "web-1.json").write_text("{}")  # its own document came: left as it is
    done = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                           "from jvmbridge.fleet.run import record_unchecked; "
                           "print(record_unchecked(Path(sys.argv[1]), Path(sys.argv[2])))", str(tmp_path), str(results)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "['gone-1', 'stuck-1']\n", done.stderr
    assert json.loads((tmp_path / "gone-1.json").read_text()) == {"host": "gone-1",
                                                                   "unchecked": "unreachable: Connection refused"}
    assert json.loads((tmp_path / "stuck-1.json").read_text()) == {"host": "stuck-1", "unchecked": "gave no document"}
    assert (tmp_path / "web-1.json").read_text() == "{}"
    assert {stat.S_IMODE((tmp_path / f"{host}.json").stat().st_mode) for host in ("gone-1", "stuck-1")} == {0o600}


def test_a_document_of_millions_of_small_entries_is_not_built(tmp_path):
    """31 MiB of `{},` in live_jvms took 942 MB (three such hosts 2.47 GB): within the byte cap, but ten
    million dicts. It is refused on its bytes, before any is built; a document past the JDKs and JVMs
    read is refused too; the other hosts are reported."""
    import tracemalloc

    from jvmbridge.cli.common import read_fleet

    entries = 1_500_000
    (tmp_path / "many.json").write_text('{"host": "many", "jdks": [], "live_jvms": [' + "{}," * entries + "{}]}")
    (tmp_path / "jvms.json").write_text(json.dumps({"host": "jvms", "jdks": [], "live_jvms": [{}] * 5_001}))
    (tmp_path / "web-1.json").write_text(json.dumps({"host": "web-1", **GOOD_HOST}))
    tracemalloc.start()
    try:
        fleet = read_fleet(sorted(tmp_path.glob("*.json")))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * 3 * entries, f"{peak / 2**20:.0f} MiB"  # the file's bytes, never a dict per entry
    assert "too many entries: more than 500,000 values" in fleet.unchecked["many"]
    assert "too many entries: 5,001 JDKs and JVMs" in fleet.unchecked["jvms"]
    assert [row.host for row in fleet.rows] == ["web-1"]
