"""Run files that no jvmbridge wrote: each is refused in one line naming the file
(and the line and field where there is one), exit 2, never an internal error; and reading one is
bounded: regular files only, at most store.MAX_RUN_FILE_BYTES."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA, run_cli, run_cli_here

from jvmbridge.saved.store import MAX_RUN_FILE_BYTES

GOOD = DATA / "run-0.3.0.jsonl"


def edited(tmp_path: Path, number: int, change) -> Path:
    """The 0.3.0 fixture with record ``number`` (0: the run record) changed by ``change``, as text."""
    lines = GOOD.read_text().splitlines()
    lines[number] = change(lines[number])
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def refused(path: Path, *said: str) -> None:
    done = run_cli_here("report", str(path))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"jvmbridge: error: {path}") and all(words in line for words in said), line


def with_field(line: str, keys: tuple[str, ...], value) -> str:
    record = json.loads(line)
    holder = record
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] = value
    return json.dumps(record)  # Python's json writes NaN and Infinity as those words, as a forged file has them


@pytest.mark.parametrize("metadata", [5, None, "text", [1]])
def test_metadata_that_is_not_an_object(tmp_path, metadata):
    refused(edited(tmp_path, 0, lambda line: with_field(line, ("metadata",), metadata)), ":1:", '"metadata"')


@pytest.mark.parametrize("keys, value", [(("row", "ns_per_op"), float("nan")), (("row", "ns_per_op_error"), float("inf")),
                                         (("row", "round_ns_per_op"), [1.0, float("-inf")]),
                                         (("row", "message_bytes"), "16"), (("row", "notes"), [{"kind": "?", "text": ""}])])
def test_a_figure_that_is_nan_infinite_or_of_another_type(tmp_path, keys, value):
    refused(edited(tmp_path, 1, lambda line: with_field(line, keys, value)), ":2:", f'"{".".join(keys)}')


def test_a_huge_literal_is_infinite_too(tmp_path):
    refused(edited(tmp_path, 1, lambda line: line.replace('"ns_per_op": ', '"ns_per_op": 1e400, "x": ', 1)),
            ":2:", '"row.ns_per_op"')


def test_a_file_larger_than_the_cap_is_not_read(tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text(GOOD.read_text())
    os.truncate(big, MAX_RUN_FILE_BYTES + 1)  # sparse: no disk used
    refused(big, f"larger than {MAX_RUN_FILE_BYTES // 2**20} MiB")


def read_in_a_child(path: str) -> subprocess.CompletedProcess:
    """store.read(path) in a process of at most 1 GiB that must end within 60 s (unbounded, reading
    /dev/zero took 7.6 GB in 8 s, and a FIFO waits for a writer forever)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    return subprocess.run([sys.executable, "-c", "import sys\nfrom jvmbridge.saved.store import ResultFileError, read\n"
                           "try:\n    read([sys.argv[1]])\nexcept ResultFileError as e:\n    sys.exit(str(e))\n", path],
                          capture_output=True, text=True, timeout=60, preexec_fn=limit)


def test_a_device_is_refused_unread():
    done = read_in_a_child("/dev/zero")
    assert done.returncode == 1 and done.stderr == "/dev/zero: not a regular file (a character device): " \
                                                   "runs are read from files only\n", done.stderr


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    done = read_in_a_child(str(fifo))
    assert done.returncode == 1 and done.stderr == f"{fifo}: not a regular file (a FIFO): runs are read from files only\n"


def test_report_refuses_a_device_and_a_fifo_in_one_line(tmp_path):
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    for path, kind in ((Path("/dev/zero"), "a character device"), (fifo, "a FIFO")):
        done = run_cli("report", str(path), timeout=60)
        assert done.returncode == 2 and done.stderr == f"jvmbridge: error: {path}: not a regular file ({kind}): " \
                                                       "runs are read from files only\n", done.stderr


def test_a_record_nested_past_the_parser_is_skipped_in_one_line(tmp_path):
    deep = edited(tmp_path, 1, lambda line: '{"a": ' * 5000 + "1" + "}" * 5000)
    done = run_cli_here("report", str(deep))
    assert "internal error" not in done.stderr and done.returncode == 0, done.stderr
    assert f"{deep}:2: JSON nested deeper than any jvmbridge record, skipped" in done.stderr
