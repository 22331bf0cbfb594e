"""`openssl speed` text as people publish it (1.0.2 to 3.x; table, -mr, -multi; pasted with or
without its line breaks) read beside measured runs, every run of a text with its own setting.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_published.py."""
from __future__ import annotations

import re

import pytest
from helpers import DATA, report, rows_by_configuration, run_cli_here
from hypothesis import given, settings
from hypothesis import strategies as st

from jvmbridge.saved.published import acceleration, platform_of
from jvmbridge.saved.speed_text import parse_speed_text

PUBLISHED = DATA / "published"
TEXTS = sorted(PUBLISHED.glob("*.txt")) + [DATA / "openssl-1.0.2-speed.txt", DATA / "openssl-1.1.1-speed-evp.txt"]
# A code block's line numbers belong to its lines: reflowed, they are glued to words nothing can tell apart.
REFLOWABLE = [path for path in TEXTS if path.name != "numbered-code-block.txt"]


def test_a_paste_that_lost_its_line_breaks_reads_as_the_table_it_was():
    (run,) = parse_speed_text((PUBLISHED / "one-line-paste.txt").read_text(), "paste")
    assert run.version == "OpenSSL 3.0.2" and run.cpuinfo.startswith("CPUINFO: OPENSSL_ia32cap=0x7ffaf3ff")
    assert [f.message_bytes for f in run.figures] == [16, 64, 256, 1024, 8192, 16384]
    assert run.figures[-1].bytes_per_s == pytest.approx(128055.98e3)  # the table's, not the "Doing" lines'
    document, _ = report(PUBLISHED / "one-line-paste.txt")
    row = rows_by_configuration(document)["OpenSSL speed (C loop) | AES-NI on | aes-256-cbc 16 B"]
    assert row["run 1 ns/op"] == pytest.approx(16 / 109798.91e3 * 1e9)
    assert "read back from the text's CPUINFO line" in document["notes"][0]


def test_with_and_without_aesni_are_two_runs_each_with_its_setting():
    path = PUBLISHED / "with-and-without-aesni.txt"
    first, second = parse_speed_text(path.read_text(), "post")
    assert first.environment == {} and second.environment == {"OPENSSL_ia32cap": "~0x200000200000000"}
    assert second.command == 'OPENSSL_ia32cap="~0x200000200000000" openssl speed -elapsed -evp aes-256-cfb'
    document, _ = report(path)
    rows = rows_by_configuration(document)
    # 1.1.1 prints no CPUINFO line: the first run's AES-NI is not stated, the second's is off by its mask.
    assert rows["OpenSSL speed (C loop) | AES-NI not stated | aes-256-cfb 16384 B"]["run 2 ns/op"] is None
    assert rows["OpenSSL speed (C loop) | AES-NI off | aes-256-cfb 16384 B"]["run 2 ns/op"] == pytest.approx(
        16384 / 97774.93e3 * 1e9)
    notes = "\n".join(document["notes"])
    assert "run 1 of 2 in the text (line 3): AES-NI not stated" in notes
    assert "run 2 of 2 in the text (line 21): AES-NI off (OPENSSL_ia32cap=~0x200000200000000 given to the command" in notes
    assert "-elapsed: wall-clock time" in notes and "repeat a configuration" not in notes
    # The author's comparison, as columns by setting, in the text's order.
    by_setting, _ = report("--columns", "setting", path)
    assert by_setting["columns"] == ["AES-NI not stated", "AES-NI off"]
    (row,) = [r for r in by_setting["comparison"] if r["configuration"].endswith("aes-256-cfb 16384 B")]
    versus = row["AES-NI off vs AES-NI not stated"]  # a published figure has no interval: high is null
    assert round(versus["times"], 2) == round(97774.93 / 287257.26, 2) and versus["high"] is None


def test_a_baseline_other_than_the_first_column():
    path = PUBLISHED / "with-and-without-aesni.txt"
    by_setting, _ = report("--columns", "setting", "--baseline", "AES-NI off", path)
    (row,) = [r for r in by_setting["comparison"] if r["configuration"].endswith("aes-256-cfb 16384 B")]
    assert "AES-NI off vs AES-NI not stated" not in row
    assert round(row["AES-NI not stated vs AES-NI off"]["times"], 2) == round(287257.26 / 97774.93, 2)
    refused = run_cli_here("report", "--baseline", "run 9", str(path))
    assert refused.returncode == 2 and "names no column; the columns are run 1, run 2" in refused.stderr


def test_custom_glued_sizes_an_engine_and_other_algorithms_listed_as_skipped():
    path = PUBLISHED / "vendor-custom-sizes-engine.txt"
    (run,) = parse_speed_text(path.read_text(), "vendor")
    assert sorted({f.message_bytes for f in run.figures}) == [51200, 102400, 204800, 524288, 1048576, 2097152,
                                                              4194304, 8388608]
    assert run.options["-engine"] == "kae" and run.options["-async_jobs"] == "16"
    document, stderr = report(path)
    assert "OpenSSL speed (C loop) | AES-NI not stated, engine kae | aes-128-cbc 8388608 B" in rows_by_configuration(document)
    assert "-async_jobs 16" in document["notes"][0] and "-elapsed: wall-clock time" in document["notes"][0]
    skipped = "3 row(s) of other algorithms skipped, only AES is compared: sm4-cbc, sm3, rsa2048"
    assert skipped in stderr and skipped in document["problems"][0]


def test_a_code_block_copied_with_its_line_numbers_and_an_engine_named_by_the_output():
    path = PUBLISHED / "numbered-code-block.txt"
    first, second = parse_speed_text(path.read_text(), "guide")
    assert first.command == "openssl speed -elapsed -evp aes-128-cbc -engine qatengine" and first.line == 3
    assert [f.message_bytes for f in first.figures] == [16, 64, 256, 1024, 8192, 16384]
    assert first.figures[0].bytes_per_s == pytest.approx(458690.25e3)  # "17AES-128-CBC 458690.25k": the table's
    assert second.command is None and second.engine == "qatengine"  # from 'Engine "qatengine" set.' alone
    document, _ = report(path)
    rows = rows_by_configuration(document)
    assert "OpenSSL speed (C loop) | AES-NI on, engine qatengine | aes-128-cbc 16 B" in rows
    assert "OpenSSL speed (C loop) | AES-NI on, engine qatengine | aes-256-cbc 16384 B" in rows
    assert "-engine qatengine; -elapsed" in document["notes"][0]
    assert "engine qatengine, as the output says it was set" in document["notes"][1]
    assert "not stated: -provider, -multi, -elapsed" in document["notes"][1]  # -engine is stated


def test_a_windows_session_with_prompts_paths_crlf_and_set():
    path = PUBLISHED / "windows-prompt.txt"
    assert b"\r\n" in path.read_bytes()
    first, second = parse_speed_text(path.read_text(), "windows")
    assert first.command == second.command == "openssl speed -evp aes-128-gcm -seconds 2"
    assert second.environment == {"OPENSSL_ia32cap": "~0x200000200000000"}  # from `set` at the prompt
    document, _ = report(path)
    rows = rows_by_configuration(document)
    assert rows["OpenSSL speed (C loop) | AES-NI on | aes-128-gcm 16 B"]["run 1 ns/op"]
    assert rows["OpenSSL speed (C loop) | AES-NI off | aes-128-gcm 16 B"]["run 2 ns/op"]
    assert "AES-NI off (read back from the text's CPUINFO line: AES-NI unused" in document["notes"][1]


def test_1_0_2_low_level_ige_beside_evp():
    document, _ = report(PUBLISHED / "openssl-1.0.2-ige-and-evp.txt")
    rows = rows_by_configuration(document)
    # 1.0.x's AES_* functions (the spaced names) have no AES-NI path; EVP's state is not printed.
    assert rows["OpenSSL speed (C loop) | AES-NI off | aes-256-ige 8192 B"]["run 1 ns/op"]
    assert rows["OpenSSL speed (C loop) | AES-NI not stated | aes-128-cbc 8192 B"]["run 2 ns/op"]
    assert "without -evp: its low-level AES functions have no AES-NI path" in document["notes"][0]


def test_a_text_with_only_the_doing_lines():
    (run,) = parse_speed_text((PUBLISHED / "doing-lines-only.txt").read_text(), "doing")
    assert run.figures[0].bytes_per_s == pytest.approx(85402138 * 16 / 3.00)
    assert run.figures[2].bytes_per_s == pytest.approx(30331205 * 256 / 2.99)
    document, _ = report(PUBLISHED / "doing-lines-only.txt")
    assert "figures from the \"Doing\" lines" in document["notes"][0]
    assert "not stated: -engine, -provider, -multi, -elapsed" in document["notes"][0]


def test_an_aarch64_text_is_read_with_armcap():
    text = ("$ OPENSSL_armcap=0x0 openssl speed -evp aes-128-gcm -bytes 1024\n"
            "Doing AES-128-GCM for 3s on 1024 size blocks: 612043 AES-128-GCM's in 3.00s\n")
    (run,) = parse_speed_text(text, "arm")
    assert run.environment == {"OPENSSL_armcap": "0x0"}
    platform = platform_of(run)
    assert platform.accelerator == "ARMv8 Crypto Extensions"
    assert acceleration(run, platform, run.figures[0]) == (
        False, "OPENSSL_armcap=0x0 given to the command, not read back: the text has no CPUINFO line")


def test_figures_below_10000_bytes_per_second_are_printed_without_k():
    (run,) = parse_speed_text("type 16 bytes 64 bytes\naes-256-cbc 9876.54 12345.67k\n", "slow")
    assert [f.bytes_per_s for f in run.figures] == [pytest.approx(9876.54), pytest.approx(12345670)]


def figures_and_settings(text: str) -> list:
    return [(run.command, run.environment, run.options, run.version, run.cpuinfo,
             [(f.cipher, f.message_bytes, round(f.bytes_per_s, 3), f.low_level) for f in run.figures], run.skipped)
            for run in parse_speed_text(text, "text")]


@settings(max_examples=60, deadline=None)
@given(path=st.sampled_from(REFLOWABLE), data=st.data())
def test_reflowing_any_text_keeps_its_runs_figures_and_settings(path, data):
    text = path.read_text()
    breaks = [m.start() for m in re.finditer(r"\r?\n", text)]
    joined = set(data.draw(st.lists(st.sampled_from(breaks), unique=True), label="joined") if breaks else [])
    reflowed = "".join(" " if i in joined else c for i, c in enumerate(text.replace("\r\n", "\n")))
    assert figures_and_settings(reflowed) == figures_and_settings(text)
    assert figures_and_settings(" ".join(text.split())) == figures_and_settings(text)  # all on one line


def test_the_old_1_0_2_table_with_spaced_names_and_five_sizes():
    (run,) = parse_speed_text((DATA / "openssl-1.0.2-speed.txt").read_text(), "old")
    assert run.version == "OpenSSL 1.0.2k-fips 26 Jan 2017"
    assert {f.cipher for f in run.figures} == {"aes-128-cbc", "aes-256-cbc"} and run.skipped == ["sha256"]
    assert sorted({f.message_bytes for f in run.figures}) == [16, 64, 256, 1024, 8192]


def test_the_table_unit_is_thousands_of_bytes_per_second():
    document, _ = report(DATA / "openssl-1.0.2-speed.txt")
    row = rows_by_configuration(document)["OpenSSL speed (C loop) | AES-NI off | aes-256-cbc 16 B"]
    # 16000.00k = 16,000,000 B/s of 16-byte messages = 10^6 messages/s = 1000 ns each
    assert row["run 1 ns/op"] == pytest.approx(1000.0)


def test_openssl_1_1_1_evp_table():
    (run,) = parse_speed_text((DATA / "openssl-1.1.1-speed-evp.txt").read_text(), "evp")
    assert run.version.startswith("OpenSSL 1.1.1f")
    assert [f.message_bytes for f in run.figures] == [16, 64, 256, 1024, 8192, 16384]
    assert run.figures[-1].bytes_per_s == pytest.approx(743391.91e3)
