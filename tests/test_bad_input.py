"""Bad input: one clear line, exit 2 for usage and 1 for run failures, never a traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import run_cli


def assert_clean_failure(done, code, *fragments):
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    for fragment in fragments:
        assert fragment in done.stderr


@pytest.mark.parametrize("value, fragment", [
    ("0", "between 1 and"), ("-1", "between 1 and"), ("abc", "not a number"),
    ("1e30", "between 1 and"), ("1.5", "not a whole number"), ("nan", "not a whole number"),
])
def test_bad_iterations(value, fragment):
    done = run_cli("compare", "--iterations", value)
    assert_clean_failure(done, 2, fragment)


@pytest.mark.parametrize("value", ["1e8", "100000000", "1_000_000", "2.5e6"])
def test_iteration_spellings_are_accepted(value):
    # Accepted spellings get past validation; a bad key size then stops the run before any work.
    done = run_cli("compare", "--iterations", value, "--key-bits", "100")
    assert_clean_failure(done, 2, "--key-bits")
    assert "iterations" not in done.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--round-time", "0"], "0.01<=x<=3600"), (["--sizes", "16,big"], "nor \"sweep\""),
    (["--iterations", "2", "--rounds", "3"], "rounds must be between 1 and the iteration count"),
    (["--forks", "3", "--max-forks", "2"], "max forks must be between --forks (3) and 100, not 2"),
    (["--target-error", "0"], "0<x<100"), (["--total-time", "0"], "x>0"),
])
def test_bad_round_time_sizes_and_rounds(args, fragment):
    assert_clean_failure(run_cli("compare", *args), 2, fragment)


def test_unknown_key_size():
    assert_clean_failure(run_cli("compare", "--key-bits", "512"), 2, "'512' is not one of '128', '192', '256'")


def test_missing_java_path():
    assert_clean_failure(run_cli("compare", "--java", "/nonexistent/java"), 2, "no such file")


def test_path_that_is_not_a_jvm(tmp_path):
    assert_clean_failure(run_cli("compare", "--java", str(tmp_path)), 2, "not a JVM")


def test_no_jvm_at_all(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    done = run_cli("compare", "--engine", "jvm")
    assert_clean_failure(done, 2, "no JVM found")




def test_jvm_crash_mid_run_keeps_the_other_rows(tmp_path):
    # A real crash: the heap cannot hold an 8 MiB message three times, and the JVM aborts on OOM.
    done = run_cli("compare", "--engine", "jvm", "--engine", "pyca", "--message-size", "8388608",
                   "--iterations", "3", "--rounds", "1", "--max-forks", "2", "--jvm-arg=-Xmx20m",
                   "--jvm-arg=-XX:+CrashOnOutOfMemoryError", cwd=tmp_path)
    assert_clean_failure(done, 1, "the JVM crashed", "killed by SIGABRT", "OutOfMemory", "report: /")
    assert done.stderr.count("failed:") == 2
    assert "AES-NI on" in done.stdout and "AES-NI off" in done.stdout



@pytest.mark.fast
@pytest.mark.parametrize("args, line", [
    (["compare", "--sizes", "16,,64"],
     "jvmbridge: error: Invalid value for '--sizes' / '--message-size': '16,,64' has an empty size between commas"),
    (["compare", "--iterations", "1e99"],
     "jvmbridge: error: Invalid value for '--iterations': iterations must be between 1 and 1e+12, not 1e+99"),
    # Past a float's range (OverflowError), and past what Decimal rounds or int() builds in a second.
    (["compare", "--iterations", "1e400"],
     "jvmbridge: error: Invalid value for '--iterations': iterations must be between 1 and 1e+12, not 1e+400"),
    (["compare", "--iterations", "1e999999999"],
     "jvmbridge: error: Invalid value for '--iterations': iterations must be between 1 and 1e+12, not 1e+999999999"),
    (["compare", "--engine", "openssl-cli", "--openssl", "/nonexistent"],
     "jvmbridge: error: engine openssl-cli cannot run: no `/nonexistent` command (--openssl PATH)"),
    (["compare", "--engine", "openssl-cli", "--java", "/nonexistent"],
     "jvmbridge: error: --java is for the engines that run a JVM (jvm, aesnitester); none of those asked for "
     "(openssl-cli) does"),
    (["compare", "--engine", "pyca", "--engine", "c-loop", "--all-jdks", "--jvm-arg=-Xmx1g"],
     "jvmbridge: error: --all-jdks and --jvm-arg are for the engines that run a JVM (jvm, aesnitester); none of "
     "those asked for (pyca, c-loop) does"),
])
def test_what_is_wrong_is_said_in_one_short_line(args, line):
    done = run_cli(*args, timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines() == [line]


@pytest.mark.fast
def test_plain_jvmbridge_prints_its_help_not_an_error():
    done = run_cli()
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("Usage: jvmbridge [OPTIONS] COMMAND [ARGS]...") and "compare" in done.stdout


@pytest.mark.fast
@pytest.mark.parametrize("args", [["compare", "-o"], ["verify", "-o"], ["report", "x.jsonl", "--plot"]])
def test_a_file_in_a_folder_that_does_not_exist_is_refused_not_made(tmp_path, args):
    target = tmp_path / "typo" / "out.png"
    done = run_cli(*args, str(target))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"{target.parent}: no such folder (make it first)" in done.stderr and not target.parent.exists()


@pytest.mark.fast
@pytest.mark.parametrize("option", [["--format", "jmh"], ["--export-jmh", "fleet.json"]])
def test_a_fleet_report_asked_for_a_format_only_runs_have_says_so(tmp_path, option):
    (tmp_path / "checked").mkdir()
    (tmp_path / "checked" / "host.json").write_text(
        '{"host": "h", "jdks": [{"java_home": "/j", "version": "17", "options": [], '
        '"verdicts": [{"mode": "CTR", "status": "active", "reason": "", "fix": ""}]}]}')
    done = run_cli("report", str(tmp_path / "checked"), *[str(tmp_path / o) if o.endswith(".json") else o for o in option])
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "jmh is a format of saved `compare` runs; a fleet of `check` documents has table" in done.stderr
    assert not (tmp_path / "fleet.json").exists()


def test_a_jvm_option_java_refuses_is_quoted_verbatim_before_anything_is_measured(tmp_path):
    done = run_cli("compare", "--jvm-arg=-XX:+NoSuchFlag", "--output", str(tmp_path / "run.jsonl"))
    assert_clean_failure(done, 2, "Unrecognized VM option 'NoSuchFlag'")
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "run.jsonl").exists()


def run_cli_into_a_full_disk(*args: str) -> subprocess.CompletedProcess:
    """The CLI with its stdout on /dev/full, where every write fails as on a full disk (ENOSPC)."""
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, "-m", "jvmbridge", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=300)


FULL = "jvmbridge: error: the output could not be written to stdout: No space left on device"


@pytest.mark.fast
@pytest.mark.parametrize("output_format", ["table", "json"])
def test_a_report_stdout_cannot_take_exits_74_in_one_line(tmp_path, output_format):
    # All active: 0 had it been printed; 1 (the old exit code) would say "not active".
    (tmp_path / "web-1.json").write_text(json.dumps(
        {"host": "web-1", "jdks": [{"java_home": "/jdk", "version": "17", "options": [],
                                    "verdicts": [{"mode": "CBC", "status": "active", "reason": "", "fix": ""}]}]}))
    done = run_cli_into_a_full_disk("report", str(tmp_path), "--format", output_format)
    assert done.returncode == 74 and done.stderr.splitlines() == [FULL], done.stderr


@pytest.mark.fast
def test_help_that_stdout_cannot_take_exits_74_in_one_line():
    done = run_cli_into_a_full_disk("--help")
    assert done.returncode == 74 and done.stderr.splitlines() == [FULL], done.stderr


@pytest.mark.fast
def test_a_reader_that_closed_the_pipe_gets_no_error_line_and_the_exit_code_says_so():
    read, write = os.pipe()
    os.close(read)  # as `| head` does once it has its lines
    try:
        done = subprocess.run([sys.executable, "-m", "jvmbridge", "--help"], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 74 and done.stderr == "", done.stderr


def test_a_check_whose_document_stdout_cannot_take_is_not_called_not_active():
    done = run_cli_into_a_full_disk("check", "--no-verify", "--mode", "cbc", "--mode-time", "1", "--quiet")
    assert done.returncode == 74 and done.stderr.splitlines() == [FULL], done.stderr


@pytest.mark.fast
def test_a_check_document_with_nulls_is_its_host_not_checked(tmp_path):
    verdict = {"mode": "CBC", "status": "active", "reason": None, "fix": None}
    (tmp_path / "web-1.json").write_text(json.dumps(
        {"host": "web-1", "jdks": [{"java_home": None, "version": None, "options": None, "verdicts": [verdict]}]}))
    done = run_cli("report", str(tmp_path / "web-1.json"))
    assert done.returncode == 2 and done.stderr == "", done.stderr
    assert "not checked  " in done.stdout and "('reason' is null, not text)" in done.stdout, done.stdout
