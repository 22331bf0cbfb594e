"""`jvmbridge flags`: real JVMs' PrintFlagsFinal, saved text from JDK 8 on, and hostile input.

Split by tier: here what needs a process; the rest is in tests/unit/test_flags.py. Saved text that
no JVM is started for is read by the CLI's entry point in this process (helpers.run_cli_here)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import DATA, jdk_homes, run_cli, run_cli_here


def flags_json(*args, **kwargs) -> dict:
    done = run_cli("flags", "--format", "json", *args, **kwargs)
    assert done.returncode == 0, done.stderr
    return {(f["source"], f["name"]): f for f in json.loads(done.stdout)["flags"]}


def test_default_view_lists_the_crypto_flags_with_kind_and_origin():
    found = flags_json()
    names = {name for _, name in found}
    assert {"UseAES", "UseAESIntrinsics", "UseAESCTRIntrinsics", "UseGHASHIntrinsics", "UseSHA"} <= names
    assert "UseG1GC" not in names
    (aes,) = [f for (_, name), f in found.items() if name == "UseAESIntrinsics"]
    assert aes["kind"] == "diagnostic" and aes["origin"] == "default"


def test_options_after_double_dash_take_effect_and_the_origin_says_why():
    found = {name: f for (_, name), f in flags_json("--", "-XX:-UseAES").items()}
    assert found["UseAES"]["value"] == "false" and found["UseAES"]["origin"] == "command line"
    assert found["UseAESIntrinsics"]["value"] == "false"
    assert found["UseAESCTRIntrinsics"]["why"] == "follows UseAES=false, command line"
    assert found["UseGHASHIntrinsics"]["value"] == "true"


@pytest.mark.skipif(len(jdk_homes()) < 2, reason="needs a second JDK")
def test_several_jvms_side_by_side_in_one_table():
    homes = jdk_homes()[:2]
    done = run_cli("flags", "--java", str(homes[0]), "--java", str(homes[1]), "--name", "aes")
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert homes[0].name in header and homes[1].name in header
    assert all("aes" in row.split()[0].lower() for row in rows) and rows


def test_all_and_csv():
    done = run_cli("flags", "--all-flags", "--format", "csv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "source,type,name,value,kind,origin,why"
    assert len(lines) > 500  # every flag of the JVM, not only crypto ones


def test_saved_text_without_unlock_is_flagged_as_the_grep_pitfall(tmp_path):
    java = jdk_homes()[0] / "bin" / "java"
    text = subprocess.run([str(java), "-XX:+PrintFlagsFinal", "-version"], capture_output=True, text=True).stdout
    saved = tmp_path / "flags.txt"
    saved.write_text(text)
    done = run_cli("flags", "--from", str(saved))
    assert done.returncode == 0, done.stderr
    *table, note = done.stdout.splitlines()
    assert any(line.startswith("UseAES ") for line in table) and not any("UseAESIntrinsics" in line for line in table)
    # Said once, in the document (after the table), not again on stderr.
    assert "without -XX:+UnlockDiagnosticVMOptions" in note and not done.stderr


def test_jdk8_text_from_stdin():
    done = subprocess.run([sys.executable, "-m", "jvmbridge", "flags", "--from", "-", "--format", "json"],
                          input=(DATA / "jdk8-printflagsfinal.txt").read_text(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found = {f["name"]: f for f in json.loads(done.stdout)["flags"]}
    assert found["UseAES"]["origin"] == "changed"  # `:=`
    assert found["UseAESIntrinsics"]["kind"] == "product"  # JDK 8: not yet diagnostic
    assert "diagnostic" not in done.stderr and not json.loads(done.stdout)["notes"]


@pytest.mark.parametrize("content, fragment", [
    (b"", "no PrintFlagsFinal lines"),
    (b"hello\nworld\n", "no PrintFlagsFinal lines found; line 1: 'hello'"),
    (b"\x7fELF\x02\x01\x00\x00binary", "binary data"),
    (b"[Global flags]\n     bool UseAES    ", "no PrintFlagsFinal lines"),
])
def test_bad_files_get_one_line_and_exit_2(tmp_path, content, fragment):
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    done = run_cli_here("flags", "--from", str(path))
    assert done.returncode == 2
    assert fragment in done.stderr and len(done.stderr.splitlines()) == 1


def test_truncated_text_keeps_the_complete_lines(tmp_path):
    text = (DATA / "jdk8-printflagsfinal.txt").read_text()
    path = tmp_path / "cut.txt"
    path.write_text(text[: text.index("UseSHA256") + 5])
    done = run_cli_here("flags", "--from", str(path), "--name", "UseSHA")
    assert done.returncode == 0, done.stderr
    assert "UseSHA " in done.stdout and "1 line(s) were not flags" in done.stdout


def test_huge_file_is_refused(tmp_path):
    path = tmp_path / "huge.txt"
    path.write_bytes(b"x" * (17 * 2**20))
    done = run_cli_here("flags", "--from", str(path))
    assert done.returncode == 2 and "larger than 16 MiB" in done.stderr


def test_missing_file_and_bad_jvm_option():
    missing = run_cli("flags", "--from", "/nonexistent/flags.txt")
    assert missing.returncode == 2 and "No such file" in missing.stderr
    # Trusted, as root: the JVM is to refuse it, not jvmbridge's allow-list (tests/unit/test_option_files.py).
    for refused in (run_cli("flags", "--trust-jvm-arg", "--", "-XX:+NoSuchFlag"),
                    run_cli("flags", "--trust-jvm-arg", "--jvm-arg=-XX:+NoSuchFlag")):
        assert refused.returncode == 2
        assert "Unrecognized VM option 'NoSuchFlag'" in refused.stderr and len(refused.stderr.splitlines()) == 1


def test_jvm_options_go_with_jvm_arg_and_every_jdk_with_all_jdks():
    found = {name: f for (_, name), f in flags_json("--jvm-arg=-XX:-UseAES").items()}
    assert found["UseAES"]["value"] == "false" and found["UseAES"]["origin"] == "command line"
    sources = {source for source, _ in flags_json("--all-jdks", "--name", "UseAES")}
    assert len(sources) >= 2
