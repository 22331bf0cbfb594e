"""`openssl speed` text as people publish it (1.0.2 to 3.x; table, -mr, -multi; pasted with or
without its line breaks) read beside measured runs, every run of a text with its own setting.

Split by tier: here what needs a process; the rest is in tests/unit/test_published.py."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import report, rows_by_configuration, run_cli

from jvmbridge.saved.speed_text import SpeedTextError, parse_speed_text

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def speed(tmp_path, name, *args, env=None) -> Path:
    """Real `openssl speed` output of this machine, saved as a user would."""
    done = subprocess.run(["openssl", "speed", "-seconds", "1", *args], capture_output=True, text=True,
                          timeout=120, env=env)
    path = tmp_path / name
    path.write_text(done.stdout)
    return path


@pytest.mark.serial  # two runs' speeds compared
@needs_openssl
def test_this_machines_table_mr_and_multi_output(tmp_path):
    (table,) = parse_speed_text(speed(tmp_path, "t.txt", "-bytes", "64", "-evp", "aes-128-cbc").read_text(), "t")
    (mr,) = parse_speed_text(speed(tmp_path, "mr.txt", "-mr", "-bytes", "64", "-evp", "aes-128-cbc").read_text(), "mr")
    (multi,) = parse_speed_text(speed(tmp_path, "m.txt", "-multi", "2", "-bytes", "64", "-evp", "aes-128-cbc").read_text(), "m")
    for run in (table, mr, multi):
        assert [(f.cipher, f.message_bytes) for f in run.figures] == [("aes-128-cbc", 64)]
    for run in (table, multi):  # -mr output carries no CPUINFO line
        assert run.cpuinfo.startswith("CPUINFO: OPENSSL_ia32cap=")
    # -mr gives bytes/s, the table 1000s of bytes/s: both must land on the same scale.
    assert 0.2 < mr.figures[0].bytes_per_s / table.figures[0].bytes_per_s < 5
    assert multi.processes == 2 and table.processes is None  # output alone does not show -multi 1


@needs_openssl
def test_this_machines_two_runs_in_one_file_read_back_on_and_off(tmp_path):
    on = speed(tmp_path, "on.txt", "-bytes", "1024", "-evp", "aes-128-gcm").read_text()
    off = speed(tmp_path, "off.txt", "-bytes", "1024", "-evp", "aes-128-gcm",
                env={**os.environ, "OPENSSL_ia32cap": "~0x200000200000000"}).read_text()
    both = tmp_path / "both.txt"
    both.write_text(" ".join((on + off).split()))  # and pasted without line breaks
    document, _ = report("--columns", "setting", both)
    assert document["columns"] == ["AES-NI on", "AES-NI off"]
    (row,) = document["comparison"]
    assert row["AES-NI off ns/op"] > row["AES-NI on ns/op"]


@needs_openssl
def test_published_figures_sit_beside_a_measured_run(tmp_path):
    measured = tmp_path / "run.jsonl"
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "openssl-cli", "--rounds", "2", "--forks", "1", "--max-forks", "1",
                   "--message-size", "64", "--quiet", "--output", str(measured))
    assert done.returncode == 0, done.stderr
    saved = speed(tmp_path, "published.txt", "-bytes", "64", "-evp", "aes-256-cbc")
    document, _ = report(measured, saved)
    row = rows_by_configuration(document)["OpenSSL speed (C loop) | AES-NI on | aes-256-cbc 64 B"]
    assert row["run 1 ns/op"] and row["run 2 ns/op"]  # the same configuration, both sources


@pytest.mark.parametrize("text, fragment", [
    ("hello\n", "no AES figures of `openssl speed` output"),
    ("aes-128 cbc 1.00k 2.00k\n", ":1: figures for aes-128 cbc before any size header"),
    ("type 16 bytes 64 bytes\naes-128 cbc 1.00k\n", ":2: 1 figures for 2 sizes (16, 64 bytes)"),
])
def test_malformed_text_names_the_line(tmp_path, text, fragment):
    path = tmp_path / "speed.txt"
    path.write_text(text)
    with pytest.raises(SpeedTextError):
        parse_speed_text(text, str(path))
    done = run_cli("report", str(path))
    assert done.returncode == 2 and fragment in done.stderr and len(done.stderr.splitlines()) == 1
