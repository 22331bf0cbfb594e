"""Saved runs: written as they finish, kept through kills and Ctrl-C, read back by `report` and load()."""
from __future__ import annotations

import json
import math
import os
import re
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from helpers import DATA, full_disk, rounds_per_fork, run_cli, run_json, stale_jvm_files, upper_bound

from jvmbridge.saved.schema import SCHEMA_VERSION


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def start_compare(path, *args) -> subprocess.Popen:
    """A real compare run in the background, returning once its first measurement is on disk."""
    process = subprocess.Popen([sys.executable, "-m", "jvmbridge", "compare", *args, "--output", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (path.exists() and '"measurement"' in path.read_text()):
        time.sleep(0.2)
    return process


class Printed(NamedTuple):
    path: Path  # the run compare saved
    table: str  # what compare printed


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory, quick) -> Printed:
    path = tmp_path_factory.mktemp("runs") / "run.jsonl"
    done = run_cli("compare", *quick, "--engine", "jvm", "--engine", "openssl-cli", "--output", str(path))
    assert done.returncode == 0, done.stderr
    return Printed(path, done.stdout)


@pytest.fixture(scope="module")
def saved(saved_run) -> Path:
    return saved_run.path


def test_every_record_carries_the_schema_and_the_run_metadata(saved):
    written = records(saved)
    assert [r["type"] for r in written] == ["run"] + ["measurement"] * 4 + ["end"]
    assert {r["schema_version"] for r in written} == {SCHEMA_VERSION}
    metadata = written[0]["metadata"]
    for key in ("host", "cpu", "cores", "kernel", "jvmbridge_version", "started_utc", "volatile"):
        assert key in metadata
    assert "aes" in metadata["cpu"]["features"] or metadata["cpu"]["features"] == []
    jvm_row = written[1]["row"]
    assert jvm_row["details"]["java_home"] and "UseAES=true" in jvm_row["verified_state"]
    assert len(jvm_row["round_ns_per_op"]) == sum(rounds_per_fork(jvm_row, 3))  # 2 forks of 3, and spares


def test_load_gives_a_tidy_frame(saved):
    import jvmbridge

    frame = jvmbridge.load(saved)
    assert len(frame) == 4
    assert {"host", "cpu_model", "kernel", "started_utc", "cipher", "ns_per_op"} <= set(frame.columns)
    assert frame.cipher.unique().tolist() == ["aes-256-cbc"]


def test_report_two_runs_side_by_side(saved, tmp_path):
    second = tmp_path / "second.jsonl"
    second.write_text(saved.read_text().replace(records(saved)[0]["run_id"], "another-run"))
    done = run_cli("report", str(saved), str(second), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["columns"] == ["run 1", "run 2"]
    for row in data["comparison"]:
        # The same numbers twice: every range overlaps, so nothing may be called faster.
        versus = row["run 2 vs run 1"]  # numbers, as compare's ratios are
        assert versus["significant"] is False and versus["low"] <= 1 <= upper_bound(versus) and versus["kind"] == "across"
    markdown = run_cli("report", str(saved), str(second), "--format", "markdown").stdout
    assert markdown.splitlines()[1].startswith("|---|")


def test_report_shows_the_figures_compare_printed_and_ratios_from_their_intervals(tmp_path):
    runs = []
    for name in ("first", "second"):
        done, data = run_json("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--round-time", "0.1", "--rounds", "3", "--forks", "3",
                              "--max-forks", "3", "--quiet", "-o", str(tmp_path / f"{name}.jsonl"))
        assert done.returncode == 0, done.stderr
        runs.append({row["setting"]: row for row in data["results"]})
    done, report = run_json("report", str(tmp_path / "first.jsonl"), str(tmp_path / "second.jsonl"))
    assert done.returncode == 0, done.stderr
    assert len(report["comparison"]) == 2
    for row in report["comparison"]:
        setting = next(name for name in runs[0] if name in row["configuration"])
        first, second = runs[0][setting], runs[1][setting]
        assert row["run 1 ns/op"] == first["ns_per_op"] and row["run 2 ns/op"] == second["ns_per_op"]
        versus = row["run 2 vs run 1"]  # how many times faster run 2 is: the figures' ratio, the intervals'
        assert versus["times"] == pytest.approx(first["ns_per_op"] / second["ns_per_op"])
        # Its low end: run 1's low end and run 2's high one, as far on the log scale as the two in quadrature.
        reach = math.hypot(math.log(first["ns_per_op"] / (first["ns_per_op"] - first["ns_per_op_error"])),
                           math.log((second["ns_per_op"] + second["ns_per_op_error"]) / second["ns_per_op"]))
        assert versus["low"] == pytest.approx(versus["times"] * math.exp(-reach))
        assert versus["confidence"] == first["confidence"] == 0.95


def test_report_of_one_run_shows_it_as_compare_printed_it_in_every_format(saved_run, tmp_path):
    # Two shapes and two sizes: rows finish out of the table's order (the C loop runs both sizes in each fork).
    path = tmp_path / "c-loop.jsonl"
    arguments = ["--no-interleave", "--engine", "c-loop", "--sizes", "16,64", "--shape", "message", "--shape", "stream",
                 "--round-time", "0.1", "--rounds", "2", "--forks", "2", "--max-forks", "2"]
    printed = run_cli("compare", *arguments, "-q", "-o", str(path))
    assert printed.returncode == 0, printed.stderr
    # Speedups from paired slices of forks in turns (all six in the headline): report pairs them alike.
    assert "The headline's ratios: " in printed.stdout
    finished = [r["position"] for r in records(path) if r["type"] == "measurement"]
    assert finished != sorted(finished)  # the file's order is not the table's
    table = [line for line in printed.stdout.splitlines() if line[:1].isdigit()]
    assert len(table) == len(finished) == 8
    # That run, and the module's run of the JVM and `openssl speed`: each as compare printed it.
    for run in (Printed(path, printed.stdout), saved_run):
        _reported_as_printed(run, tmp_path)


def _reported_as_printed(run: Printed, folder: Path) -> None:
    """`report` of a saved run prints what compare printed, and its JSON, Markdown and CSV hold every row:
    one report, the table on stdout, the other formats written beside (each as --format would print it)."""
    exported = {output_format: folder / f"{run.path.stem}.{output_format}" for output_format in ("json", "markdown", "csv")}
    shown = run_cli("report", str(run.path), *(f"--export-{f}={path}" for f, path in exported.items()))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == run.table  # the table, its header, notes, ratios: as compare printed them
    measured = sorted((r for r in records(run.path) if r["type"] == "measurement"), key=lambda r: r["position"])
    document = json.loads(exported["json"].read_text())
    assert [r["ns_per_op"] for r in document["results"]] == [r["row"]["ns_per_op"] for r in measured]
    for output_format in ("markdown", "csv"):
        assert exported[output_format].read_text().count("aes-256-cbc") >= len(measured)


def test_report_columns_by_size_lays_out_a_published_text_as_openssl_speed_printed_it():
    published = DATA / "published" / "with-and-without-aesni.txt"
    done, report = run_json("report", str(published), "--columns", "size")
    assert done.returncode == 0, done.stderr
    assert report["columns"] == ["16 bytes", "64 bytes", "256 bytes", "1024 bytes", "8192 bytes", "16384 bytes"]
    # The text's own figures, in its units (1000s of bytes per second), row by row.
    printed = [[float(v.rstrip("k")) for v in line.split()[1:]] for line in published.read_text().splitlines()
               if line.startswith("aes-256-cfb ")]
    shown = [[row[c] for c in report["columns"]] for row in report["comparison"]]
    assert len(shown) == len(printed) == 2
    for ours, theirs in zip(sorted(shown), sorted(printed)):
        assert ours == pytest.approx(theirs, rel=1e-6)
    assert not any(" vs " in key for row in report["comparison"] for key in row)
    table = run_cli("report", str(published), "--columns", "size")
    assert table.stdout.splitlines()[0].split()[-2:] == ["16384", "bytes"]


def test_report_columns_by_host(saved, tmp_path):
    host = records(saved)[0]["metadata"]["host"]
    other = tmp_path / "other-server.jsonl"
    other.write_text(saved.read_text().replace(records(saved)[0]["run_id"], "another-run")
                     .replace(f'"host": "{host}"', '"host": "server-b"'))
    done = run_cli("report", str(saved), str(other), "--columns", "host", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["columns"] == [host, "server-b"]


def test_report_columns_by_jdk(saved):
    done = run_cli("report", str(saved), "--columns", "jdk")
    assert done.returncode == 0, done.stderr
    assert "JDK " in done.stdout.splitlines()[0] and "native ns/op" in done.stdout.splitlines()[0]


def test_a_killed_worker_fails_its_configuration_alone(tmp_path):
    path = tmp_path / "killed.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "jvmbridge", "compare", "--no-interleave", "--shape", "message", "--engine", "jvm", "--iterations", "3e6",
                                "--forks", "2", "--output", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Only this compare's worker (-P): another run on the machine (a CI job, say) keeps its own. The
    # first turn's first JVM: its setting fails; the other setting's forks go on.
    deadline = time.time() + 60
    while subprocess.run(["pkill", "-KILL", "-P", str(process.pid), "-f", "jvmbridge.jvm.worker"]).returncode:
        assert time.time() < deadline and process.poll() is None, "no JVM worker started"
        time.sleep(0.1)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "killed by SIGKILL" in stderr
    written = records(path)
    assert [r["type"] for r in written[:1] + written[-1:]] == ["run", "end"]
    assert sorted(r["type"] for r in written[1:-1]) == ["failure", "measurement"]
    [kept] = [r["row"]["setting"] for r in written if r["type"] == "measurement"]
    report = run_cli("report", str(path))
    assert report.returncode == 0 and kept in report.stdout
    assert "missing from run" in report.stderr and "killed by SIGKILL" in report.stderr


def test_ctrl_c_keeps_finished_rows_on_screen_and_in_the_file(tmp_path):
    path = tmp_path / "interrupted.jsonl"
    # Short forks: the first row is in within seconds, the openssl speed rows' runs of 1 s each still to come.
    process = start_compare(path, "--no-interleave", "--engine", "pyca", "--engine", "openssl-cli", "--format", "csv",
                            "--round-time", "0.2", "--rounds", "2", "--forks", "1", "--max-forks", "1")
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    # openssl speed's settings, in turns, were running (or about to: "interrupted before it finished").
    assert "Traceback" not in stderr and re.search(r"openssl speed, AES-NI o(n|ff), stream failed: interrupted", stderr)
    assert len(stdout.splitlines()) >= 2  # the CSV header and at least one finished row
    written = records(path)
    assert written[-1]["type"] == "end" and written[-1]["interrupted"] is True
    assert any(r["type"] == "measurement" for r in written)
    assert run_cli("report", str(path)).returncode == 0


def interrupt_compare(path, scratch, *args) -> tuple[str, str]:
    """Ctrl-C a real compare once its third JVM worker has started: in turns, the first fork's two
    ran one after the other, so that fork is done and the second is under way; its stdout and stderr."""
    scratch.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "jvmbridge", "compare", *args, "--output", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(scratch)})
    deadline, seen = time.time() + 120, set()
    while time.time() < deadline and len(seen) < 3:
        listed = subprocess.run(["pgrep", "-P", str(process.pid), "-f", "jvmbridge.jvm.worker"],
                                capture_output=True, text=True).stdout.split()
        seen.update(listed)
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    return stdout, stderr


@pytest.mark.serial  # reads every JVM's files in /tmp
def test_ctrl_c_during_a_jvms_forks_keeps_the_forks_that_finished(tmp_path):
    path = tmp_path / "interrupted.jsonl"
    before = stale_jvm_files()
    _, stderr = interrupt_compare(path, tmp_path / "scratch", "--no-interleave", "--shape", "message", "--engine", "jvm",
                                  "--forks", "6",
                                  "--round-time", "0.1", "--rounds", "3", "--quiet")
    assert "Traceback" not in stderr
    written = records(path)
    measured = [r for r in written if r["type"] == "measurement"]
    # The settings run in turns: each one with a finished fork is a row cut short, one cut in its
    # first fork a failure that says so.
    failed = [r for r in written if r["type"] == "failure"]
    assert len(measured) >= 1 and len(measured) + len(failed) == 2, stderr
    assert {r["configuration"] for r in measured + failed} == {f"{measured[0]['configuration'].rsplit(', ', 1)[0]}, "
                                                              f"intrinsics {state}" for state in ("on", "off")}
    for row in (r["row"] for r in measured):
        assert 1 <= row["forks"] < 6 and row["rounds"] == sum(rounds_per_fork(row, 3))
        assert "interrupted (Ctrl-C)" in json.dumps(row["notes"])
    assert all(r["error"].endswith(": interrupted (Ctrl-C)") for r in failed)
    assert written[-1]["type"] == "end" and written[-1]["interrupted"] is True
    assert not stale_jvm_files() - before  # the JVM killed mid-fork leaves no perf data (TMPDIR set or not)


def test_truncated_and_corrupt_lines_are_reported_and_the_rest_read(saved, tmp_path):
    text = saved.read_text()
    lines = text.splitlines()
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join(lines[:2] + ["{not json"] + lines[2:4]) + "\n" + lines[4][: len(lines[4]) // 2])
    done = run_cli("report", str(damaged))
    assert done.returncode == 0, done.stderr
    assert f"{damaged}:3: not JSON, skipped" in done.stderr
    assert f"{damaged}:6: truncated last line, skipped" in done.stderr
    rows = [line for line in done.stdout.splitlines() if line[:1].isdigit()]  # compare's table: one run
    assert sum("intrinsics" in row for row in rows) == 2  # both JVM rows survived


def test_a_newer_schema_says_what_to_do(saved, tmp_path):
    newer = tmp_path / "newer.jsonl"
    newer.write_text(saved.read_text().replace(f'"schema_version": {SCHEMA_VERSION}',
                                                 f'"schema_version": {SCHEMA_VERSION + 1}'))
    done = run_cli("report", str(newer))
    assert done.returncode == 2
    assert "upgrade jvmbridge" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("content", [b"", b"hello\n", b"\x89PNG\r\n\x1a\n\x00\x00", b'{"a": 1}\n'])
def test_files_that_are_not_results(tmp_path, content):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    done = run_cli("report", str(path))
    assert done.returncode == 2
    assert "no jvmbridge records" in done.stderr and "Traceback" not in done.stderr


def test_plot_png_and_svg(saved, tmp_path):
    pytest.importorskip("matplotlib", reason="needs matplotlib: pip install '.[plot]'")
    png, svg = tmp_path / "figure.png", tmp_path / "figure.svg"
    done = run_cli("report", str(saved), "--plot", str(png))
    assert done.returncode == 0 and f"figure written to {png}" in done.stderr
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])  # from the IHDR chunk
    assert width == 1600 and height >= 500
    assert run_cli("report", str(saved), "--plot", str(svg)).returncode == 0
    assert b"<svg" in svg.read_bytes()[:500]
    assert run_cli("report", str(saved), "--plot", str(tmp_path / "figure.gif")).returncode == 2


def test_report_columns_by_thread_count_show_the_scaling(tmp_path):
    paths = []
    for threads in ("1", "2"):
        paths.append(tmp_path / f"threads-{threads}.jsonl")
        done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "pyca", "--threads", threads, "--round-time", "0.1", "--rounds", "3",
                       "--forks", "1", "--max-forks", "1", "--quiet", "--output", str(paths[-1]))
        assert done.returncode == 0, done.stderr
    done = run_cli("report", *map(str, paths), "--columns", "threads", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["columns"] == ["1 thread(s)", "2 thread(s)"]
    assert len(data["comparison"]) == 2  # AES-NI on and off, each with both thread counts beside
    for row in data["comparison"]:
        assert row["1 thread(s) ns/op"] > 0 and row["2 thread(s) ns/op"] > 0
        # One fork each: a ratio, with or without an interval (null where a side is one figure).
        versus = row["2 thread(s) vs 1 thread(s)"]
        assert versus["times"] > 0 and (versus["high"] is None or versus["low"] <= versus["times"] <= versus["high"])


def test_a_jvm_that_dies_on_one_size_keeps_the_sizes_it_measured(planted_jar, tmp_path):
    # -Dplanted.crashAt=77 kills the JVM of 77 bytes as it starts (a worker computes its sizes' reference
    # ciphertexts when it starts, so a JVM shared with 16 bytes, --shared-jvm, would take 16 down too).
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--cipher", "aes-128-ctr", "--engine", "jvm", "--provider", "planted.PlantedProvider",
                   "--classpath", str(planted_jar), "--trust-jvm-arg", "--jvm-arg=-Dplanted.crashAt=77", "--sizes", "16,77",
                   "--round-time", "0.1", "--rounds", "3", "--forks", "2", "--max-forks", "2", "--quiet",
                   "--format", "json", "--output", str(tmp_path / "run.jsonl"))
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert len(result["results"]) == 1, done.stderr
    (row,) = result["results"]
    assert row["message_bytes"] == 16 and row["forks"] == 2  # whether it ran before or after 77 in a fork
    assert not [n for n in row["notes"] if n["kind"] == "fork-failed"]
    (failure,) = result["failures"]
    assert failure["configuration"].endswith("77 B") and "the JVM crashed" in failure["error"]


def test_a_provider_that_refuses_one_size_fails_that_size_alone_and_its_jvm_measures_the_rest(planted_jar, tmp_path):
    # -Dplanted.refuseAt=77: a doFinal of 77 bytes throws a ProviderException, in the JVM that also measures 16.
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--cipher", "aes-128-ctr", "--engine", "jvm", "--provider", "planted.PlantedProvider",
                   "--classpath", str(planted_jar), "--trust-jvm-arg", "--jvm-arg=-Dplanted.refuseAt=77", "--sizes", "77,16", "--shared-jvm",
                   "--round-time", "0.1", "--rounds", "3", "--forks", "2", "--max-forks", "2", "--quiet",
                   "--format", "json", "--output", str(tmp_path / "run.jsonl"))
    assert done.returncode == 1
    result = json.loads(done.stdout)
    (row,) = result["results"]
    assert row["message_bytes"] == 16 and row["forks"] == 2
    assert not [n for n in row["notes"] if n["kind"] == "fork-failed"]
    (failure,) = result["failures"]
    assert failure["configuration"].endswith("77 B")
    assert failure["error"].endswith("AES/CTR/NoPadding failed in the JVM: ProviderException: planted: refuses 77 bytes")
    assert "Traceback" not in done.stderr


def test_a_fork_that_dies_after_one_finished_keeps_the_finished_one(planted_jar, tmp_path):
    # planted.marker: the first JVM to load the cipher creates the file, every later one crashes.
    saved = tmp_path / "run.jsonl"
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--cipher", "aes-128-ctr", "--engine", "jvm", "--provider", "planted.PlantedProvider",
                   "--classpath", str(planted_jar), "--trust-jvm-arg", f"--jvm-arg=-Dplanted.marker={tmp_path / 'marker'}",
                   "--round-time", "0.1", "--rounds", "3", "--forks", "2", "--quiet", "--format", "json",
                   "--output", str(saved))
    assert done.returncode == 1
    result = json.loads(done.stdout)
    (row,) = result["results"]  # a provider by class name runs once, with the JVM's defaults
    assert row["forks"] == 1 and rounds_per_fork(row, 3) == [row["rounds"]]
    (note,) = [n for n in row["notes"] if n["kind"] == "fork-failed"]
    assert note["text"].startswith("fork 2 failed, the 1 finished fork is the measurement:") and "crashed" in note["text"]
    assert result["failures"] == [] and "a fork failed; the finished forks are shown" in done.stderr
    assert [r["row"]["notes"] for r in records(saved) if r["type"] == "measurement"] == [row["notes"]]


def test_a_jvm_that_hangs_at_one_size_is_stopped_with_its_threads_and_the_rest_measured(planted_jar, tmp_path):
    # -Dplanted.blockAt=77: the provider's doFinal of 77 bytes never returns; each size in a JVM of its
    # own, in turns: the hung one is stopped at its deadline, the other measured.
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--cipher", "aes-128-ctr", "--engine", "jvm", "--provider", "planted.PlantedProvider",
                   "--classpath", str(planted_jar), "--trust-jvm-arg", "--jvm-arg=-Dplanted.blockAt=77", "--sizes", "16,77",
                   "--round-time", "0.1", "--rounds", "3", "--forks", "1", "--max-forks", "1", "--quiet",
                   "--format", "json", "--output", str(tmp_path / "run.jsonl"),
                   env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}, timeout=300)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    (row,) = result["results"]
    assert row["message_bytes"] == 16
    (failure,) = result["failures"]
    assert failure["configuration"].endswith("77 B")
    assert "jvmbridge.jvm.worker gave no answer within " in failure["error"] and ": stopped; " in failure["error"]
    dump = Path(failure["error"].split("its threads: ")[1].split(";")[0])
    assert dump.is_file() and "PlantedCipher.block" in dump.read_text()
    pid = dump.name.removeprefix("threads_pid").split("-")[0]  # threads_pid<pid>-<random>.txt
    # The stopped JVM's attach socket and perf data are not left in /tmp.
    assert not Path(f"/tmp/.java_pid{pid}").exists() and not list(Path("/tmp").glob(f"hsperfdata_*/{pid}"))
    left = subprocess.run(["pgrep", "-f", "planted.blockAt"], capture_output=True, text=True).stdout.split()
    assert not left, "the hung child is still running"


def test_a_full_disk_is_one_line_and_the_table_still_prints():
    with full_disk() as folder:
        done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "openssl-cli", "--sizes", "16",
                       "--round-time", "0.1", "--rounds", "3", "--forks", "1", "--max-forks", "1", "--quiet",
                       "--output", str(folder / "run.jsonl"))
    assert done.returncode == 1
    assert "OpenSSL speed (C loop)" in done.stdout  # every row measured is shown
    assert done.stderr.splitlines() == [
        f"jvmbridge: the results above were not saved: {folder / 'run.jsonl'}: No space left on device"]


def test_a_run_saved_by_default_lands_in_the_tests_data_home_and_the_users_is_untouched():
    from helpers import USERS_DATA_DIR

    data_home = Path(os.environ["XDG_DATA_HOME"])  # the session's (conftest.pytest_configure)

    def listing() -> set[Path]:
        return set(USERS_DATA_DIR.rglob("*")) if USERS_DATA_DIR.exists() else set()

    before = listing()
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "openssl-cli", "--sizes", "16", "--round-time", "0.1", "--rounds", "3",
                   "--forks", "1", "--max-forks", "1")
    assert done.returncode == 0, done.stderr
    saved = Path(done.stderr.split("results saved to ")[1].split()[0])
    assert saved.is_file() and data_home in saved.parents and USERS_DATA_DIR not in saved.parents
    assert listing() == before
