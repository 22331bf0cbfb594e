"""Saved `openssl speed` text (1.0.2 to 3.x; table, -mr, -multi) read beside measured runs."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from jvmbridge.native.speed_text import SpeedTextError, parse_speed_text

DATA = Path(__file__).parent / "data"


def report_rows(*files) -> list[dict]:
    done = run_cli("report", "--format", "json", *map(str, files))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["comparison"]


def test_openssl_1_0_2_table_with_spaced_names_and_five_sizes():
    parsed = parse_speed_text((DATA / "openssl-1.0.2-speed.txt").read_text(), "old")
    assert parsed.version == "OpenSSL 1.0.2k-fips  26 Jan 2017"
    assert {f.cipher for f in parsed.figures} == {"aes-128-cbc", "aes-256-cbc"}  # sha256 is not AES
    assert sorted({f.message_bytes for f in parsed.figures}) == [16, 64, 256, 1024, 8192]


def test_the_table_unit_is_thousands_of_bytes_per_second():
    rows = report_rows(DATA / "openssl-1.0.2-speed.txt")
    (row,) = [r for r in rows if r["configuration"].endswith("aes-256-cbc 16 B")]
    # 16000.00k = 16,000,000 B/s of 16-byte messages = 10^6 messages/s = 1000 ns each
    assert row["run 1 ns/op"] == pytest.approx(1000.0)
    assert "AES-NI not stated" in row["configuration"]


def test_openssl_1_1_1_evp_table():
    parsed = parse_speed_text((DATA / "openssl-1.1.1-speed-evp.txt").read_text(), "evp")
    assert parsed.version.startswith("OpenSSL 1.1.1f")
    assert [f.message_bytes for f in parsed.figures] == [16, 64, 256, 1024, 8192, 16384]
    assert parsed.figures[-1].bytes_per_s == pytest.approx(743391.91e3)


needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def speed(tmp_path, name, *args) -> Path:
    """Real `openssl speed` output of this machine, saved as a user would."""
    done = subprocess.run(["openssl", "speed", "-seconds", "1", *args], capture_output=True, text=True, timeout=120)
    path = tmp_path / name
    path.write_text(done.stdout)
    return path


@needs_openssl
def test_this_machines_table_mr_and_multi_output(tmp_path):
    table = parse_speed_text(speed(tmp_path, "t.txt", "-bytes", "64", "-evp", "aes-128-cbc").read_text(), "t")
    mr = parse_speed_text(speed(tmp_path, "mr.txt", "-mr", "-bytes", "64", "-evp", "aes-128-cbc").read_text(), "mr")
    multi = parse_speed_text(speed(tmp_path, "m.txt", "-multi", "2", "-bytes", "64", "-evp", "aes-128-cbc").read_text(), "m")
    for parsed in (table, mr, multi):
        assert [(f.cipher, f.message_bytes) for f in parsed.figures] == [("aes-128-cbc", 64)]
    for parsed in (table, multi):  # -mr output carries no CPUINFO line
        assert parsed.cpuinfo.startswith("CPUINFO: OPENSSL_ia32cap=")
    # -mr gives bytes/s, the table 1000s of bytes/s: both must land on the same scale.
    assert 0.2 < mr.figures[0].bytes_per_s / table.figures[0].bytes_per_s < 5
    assert multi.processes == 2 and table.processes == 1


@needs_openssl
def test_published_figures_sit_beside_a_measured_run(tmp_path):
    measured = tmp_path / "run.jsonl"
    done = run_cli("compare", "--engine", "openssl-cli", "--rounds", "2", "--forks", "1", "--max-forks", "1",
                   "--message-size", "64", "--quiet", "--output", str(measured))
    assert done.returncode == 0, done.stderr
    saved = speed(tmp_path, "published.txt", "-bytes", "64", "-evp", "aes-256-cbc")
    rows = report_rows(measured, saved)
    (row,) = [r for r in rows if r["configuration"] == "OpenSSL speed (C loop) | AES-NI on | aes-256-cbc 64 B"]
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
