"""Bad input: one clear line, exit 2 for usage and 1 for run failures, never a traceback.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_bad_input.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import FULL, run_cli, run_cli_here, run_cli_into_a_full_disk


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
    (["compare", "--engine", "openssl-cli", "--java", "java"],
     "jvmbridge: error: --java is for the engines that run a JVM (jvm, aesnitester); none of those asked for "
     "(openssl-cli) does"),
    (["compare", "--engine", "pyca", "--engine", "c-loop", "--all-jdks", "--jvm-arg=-Xmx1g"],
     "jvmbridge: error: --all-jdks and --jvm-arg are for the engines that run a JVM (jvm, aesnitester); none of "
     "those asked for (pyca, c-loop) does"),
])
def test_what_is_wrong_is_said_in_one_short_line(args, line):
    done = run_cli(*args, timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines() == [line]


def test_plain_jvmbridge_prints_its_help_not_an_error():
    done = run_cli_here()
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("Usage: jvmbridge [OPTIONS] COMMAND [ARGS]...") and "compare" in done.stdout


@pytest.mark.parametrize("args", [["compare", "-o"], ["verify", "-o"], ["report", "x.jsonl", "--plot"]])
def test_a_file_in_a_folder_that_does_not_exist_is_refused_not_made(tmp_path, args):
    target = tmp_path / "typo" / "out.png"
    done = run_cli_here(*args, str(target))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"{target.parent}: no such folder (make it first)" in done.stderr and not target.parent.exists()


@pytest.mark.parametrize("option", [["--format", "jmh"], ["--export-jmh", "fleet.json"]])
def test_a_fleet_report_asked_for_a_format_only_runs_have_says_so(tmp_path, option):
    (tmp_path / "checked").mkdir()
    (tmp_path / "checked" / "host.json").write_text(
        '{"host": "h", "jdks": [{"java_home": "/j", "version": "17", "options": [], '
        '"verdicts": [{"mode": "CTR", "status": "active", "reason": "", "fix": ""}]}]}')
    done = run_cli_here("report", str(tmp_path / "checked"), *[str(tmp_path / o) if o.endswith(".json") else o for o in option])
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "jmh is a format of saved `compare` runs; a fleet of `check` documents has table" in done.stderr
    assert not (tmp_path / "fleet.json").exists()


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_a_report_stdout_cannot_take_exits_74_in_one_line(tmp_path, output_format):
    # All active: 0 had it been printed; 1 (the old exit code) would say "not active".
    (tmp_path / "web-1.json").write_text(json.dumps(
        {"host": "web-1", "jdks": [{"java_home": "/jdk", "version": "17", "options": [],
                                    "verdicts": [{"mode": "CBC", "status": "active", "reason": "", "fix": ""}]}]}))
    done = run_cli_into_a_full_disk("report", str(tmp_path), "--format", output_format)
    assert done.returncode == 74 and done.stderr.splitlines() == [FULL], done.stderr


def test_help_that_stdout_cannot_take_exits_74_in_one_line():
    done = run_cli_into_a_full_disk("--help")
    assert done.returncode == 74 and done.stderr.splitlines() == [FULL], done.stderr


def test_a_reader_that_closed_the_pipe_gets_no_error_line_and_the_exit_code_says_so():
    read, write = os.pipe()
    os.close(read)  # as `| head` does once it has its lines
    try:
        done = subprocess.run([sys.executable, "-m", "jvmbridge", "--help"], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 74 and done.stderr == "", done.stderr


def test_a_check_document_with_nulls_is_its_host_not_checked(tmp_path):
    verdict = {"mode": "CBC", "status": "active", "reason": None, "fix": None}
    (tmp_path / "web-1.json").write_text(json.dumps(
        {"host": "web-1", "jdks": [{"java_home": None, "version": None, "options": None, "verdicts": [verdict]}]}))
    done = run_cli_here("report", str(tmp_path / "web-1.json"))
    assert done.returncode == 2 and done.stderr == "", done.stderr
    assert "not checked  " in done.stdout and "('reason' is null, not text)" in done.stdout, done.stdout


NUMBERS = [("check", "--mode-time"), ("check", "--verify-time"), ("verify", "--jdk-time"), ("guard", "--wait-time"),
           ("compare", "--round-time"), ("compare", "--target-error"), ("compare", "--total-time")]
# Refused after the option under test (click takes options in the order given): a run that starts
# only where that option was let through, and then fails the test with this other error.
STOP_THE_RUN = {"compare": ["--key-bits", "100"], "check": ["--java=/nonexistent"], "verify": ["--java=/nonexistent"],
                "guard": ["--java=/nonexistent"]}


@pytest.mark.parametrize("command, option, value", [(*each, value) for each in NUMBERS
                                                    for value in ("nan", "inf", "-inf", "-1", "1e999")])
def test_a_number_that_is_no_number_of_anything_is_refused_in_one_line(command, option, value):
    """nan passes every comparison a range makes (click's FloatRange let it through, and `check
    --mode-time nan` ran on and exited 2 with no word); inf is no duration. In this process (the real
    CLI's one-line error is test_what_is_wrong_is_said_in_one_short_line's); a bad option after it stops
    the run where the number is let through."""
    done = run_cli_here(command, f"{option}={value}", *STOP_THE_RUN[command])
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"jvmbridge: error: Invalid value for '{option}'"), done.stderr


COUNTS = ["--rounds", "--threads", "--forks", "--max-forks", "--iterations"]


@pytest.mark.parametrize("option, value", [(option, value) for option in COUNTS
                                           for value in ("1001", "99999999999999999999999", "nan", "0", "-1")
                                           if not (option == "--iterations" and value == "1001")]
                         + [("--sizes", "99999999999999999999999"), ("--sizes", "16,67108865"), ("--sizes", "-1")])
def test_a_count_past_its_bound_or_no_count_at_all_is_refused_in_one_line(option, value):
    """Each count has a top: `--rounds 99999999999999999999999` once ran on for ever. A bad key size
    after it stops the run where the count is let through."""
    done = run_cli_here("compare", f"{option}={value}", "--key-bits", "100")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"jvmbridge: error: Invalid value for '{option}'"), done.stderr


@pytest.mark.parametrize("pid", ["99999999999999999999999", "4194305", "0", "-1", "nan"])
def test_a_pid_no_kernel_hands_out_is_refused_in_one_line(pid):
    done = run_cli_here("check", "--pid", pid, *STOP_THE_RUN["check"])
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("jvmbridge: error: Invalid value for '--pid'"), done.stderr


@pytest.mark.parametrize("command", ["jdks", "check", "verify", "flags"])
def test_a_java_that_does_not_exist_is_refused_in_one_line(command):
    done = run_cli(command, "--java", "/nonexistent", timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "jvmbridge: error: Invalid value for '--java': /nonexistent: no such file or directory"], done.stderr


def test_a_classpath_that_is_a_socket_is_no_jar(tmp_path):
    import socket

    path = tmp_path / "provider.jar"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        done = run_cli("verify", "--classpath", str(path), timeout=60)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"jvmbridge: error: --classpath {path}: no such jar or folder"], done.stderr


def test_a_jvm_that_refuses_its_heap_says_why():
    """-Xmx1k: HotSpot says why on the line after "Error occurred during initialization of VM"."""
    from jvmbridge.jvm.messages import complaint

    said = "Error occurred during initialization of VM\nToo small maximum heap\n"
    assert complaint(said) == "Error occurred during initialization of VM Too small maximum heap"
