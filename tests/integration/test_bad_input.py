"""Bad input: one clear line, exit 2 for usage and 1 for run failures, never a traceback.

Split by tier: here what needs a process; the rest is in tests/unit/test_bad_input.py. What is refused
before anything runs is asked of the CLI's entry point in this process (helpers.run_cli_here): a new
interpreter for each would take most of this file's time."""
from __future__ import annotations

import pytest
from helpers import FULL, run_cli, run_cli_here, run_cli_into_a_full_disk


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
    done = run_cli_here("compare", "--iterations", value)
    assert_clean_failure(done, 2, fragment)


@pytest.mark.parametrize("value", ["1e8", "100000000", "1_000_000", "2.5e6"])
def test_iteration_spellings_are_accepted(value):
    # Accepted spellings get past validation; a bad key size then stops the run before any work.
    done = run_cli_here("compare", "--iterations", value, "--key-bits", "100")
    assert_clean_failure(done, 2, "--key-bits")
    assert "iterations" not in done.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--round-time", "0"], "0.01<=x<=3600"), (["--sizes", "16,big"], "nor \"sweep\""),
    (["--iterations", "2", "--rounds", "3"], "rounds must be between 1 and the iteration count"),
    (["--forks", "3", "--max-forks", "2"], "max forks must be between --forks (3) and 100, not 2"),
    (["--target-error", "0"], "0<x<100"), (["--total-time", "0"], "x>0"),
])
def test_bad_round_time_sizes_and_rounds(args, fragment):
    assert_clean_failure(run_cli_here("compare", *args), 2, fragment)


def test_unknown_key_size():
    assert_clean_failure(run_cli_here("compare", "--key-bits", "512"), 2, "'512' is not one of '128', '192', '256'")


def test_missing_java_path():
    assert_clean_failure(run_cli_here("compare", "--java", "/nonexistent/java"), 2, "no such file")


def test_path_that_is_not_a_jvm(tmp_path):
    assert_clean_failure(run_cli_here("compare", "--java", str(tmp_path)), 2, "not a JVM")


def test_no_jvm_at_all(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    done = run_cli("compare", "--engine", "jvm")
    assert_clean_failure(done, 2, "no JVM found")


def test_jvm_crash_mid_run_keeps_the_other_rows(tmp_path):
    # A real crash: the heap cannot hold an 8 MiB message three times, and the JVM aborts on OOM. One fork:
    # a crashed JVM's setting forks no more, and the pyca rows beside need only be there.
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "jvm", "--engine", "pyca", "--message-size", "8388608",
                   "--iterations", "3", "--rounds", "1", "--forks", "1", "--max-forks", "1", "--jvm-arg=-Xmx20m",
                   "--jvm-arg=-XX:+CrashOnOutOfMemoryError", cwd=tmp_path)
    assert_clean_failure(done, 1, "the JVM crashed", "killed by SIGABRT", "OutOfMemory", "report: /")
    assert done.stderr.count("failed:") == 2, done.stderr
    assert "AES-NI on" in done.stdout and "AES-NI off" in done.stdout


def test_a_jvm_option_java_refuses_is_quoted_verbatim_before_anything_is_measured(tmp_path):
    # Trusted, as root: the JVM is to refuse it, not jvmbridge's allow-list (tests/unit/test_option_files.py).
    done = run_cli("compare", "--trust-jvm-arg", "--jvm-arg=-XX:+NoSuchFlag", "--output", str(tmp_path / "run.jsonl"))
    assert_clean_failure(done, 2, "Unrecognized VM option 'NoSuchFlag'")
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "run.jsonl").exists()


def test_a_check_whose_document_stdout_cannot_take_is_not_called_not_active():
    done = run_cli_into_a_full_disk("check", "--no-verify", "--mode", "cbc", "--mode-time", "1", "--quiet")
    assert done.returncode == 74 and done.stderr.splitlines() == [FULL], done.stderr


def test_a_jvm_that_refuses_its_options_is_quoted_not_only_its_exit_code():
    """-Xmx1k: the JVM's own reason, which comes on the line after its first, in one line."""
    done = run_cli("flags", "--", "-Xmx1k")
    assert_clean_failure(done, 2, "the JVM refused to start: Error occurred during initialization of VM "
                                  "Too small maximum heap")
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_a_provider_class_that_is_not_on_the_classpath_gets_its_hint_once(tmp_path):
    # A non-ASCII name is a Java identifier, so a class name: the run says it is missing, and how to
    # give it, once ("get the jar passed with --classpath and pass its jar with --classpath" before).
    done = run_cli("compare", "--engine", "jvm", "--provider", "é.X", "--forks", "1", "--max-forks", "1", "--rounds",
                   "1", "--round-time", "0.1", "--shape", "message", "--quiet", "-o", str(tmp_path / "run.jsonl"))
    assert_clean_failure(done, 1, "é.X is not on the classpath: pass its jar with --classpath")
    assert done.stderr.count("--classpath") == 1, done.stderr
