"""One vocabulary: the options every document command shares, the time options named one way, and
the Python API's parameters named as `compare`'s options.

Split by tier: here what needs a process; the rest is in tests/unit/test_vocabulary.py."""
from __future__ import annotations

import json

from helpers import DATA, full_disk, run_cli


def test_output_saves_the_json_document_beside_the_table_and_quiet_keeps_stderr_empty(tmp_path):
    published = DATA / "published" / "with-and-without-aesni.txt"
    saved = tmp_path / "report.json"
    done = run_cli("report", str(published), "-o", str(saved))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("configuration") and done.stderr == f"jvmbridge: document saved to {saved}\n"
    assert json.loads(saved.read_text()) == json.loads(run_cli("report", str(published), "--format", "json").stdout)
    quiet = run_cli("flags", "--from", str(DATA / "jdk8-printflagsfinal.txt"), "-q", "-o", str(tmp_path / "f.json"))
    assert quiet.returncode == 0 and not quiet.stderr
    assert json.loads((tmp_path / "f.json").read_text())["flags"]
    with full_disk() as folder:
        full = run_cli("jdks", "-q", "-o", str(folder / "jdks.json"))
    assert full.returncode == 1 and "PATH" in full.stdout
    assert full.stderr == f"jvmbridge: the document above was not saved: {folder / 'jdks.json'}: No space left on device\n"
    missing = run_cli("jdks", "-o", str(tmp_path / "no" / "such" / "jdks.json"))
    assert missing.returncode == 2 and "no such folder (make it first)" in missing.stderr


def test_exports_beside_the_table_any_number_of_them(tmp_path):
    paths = {name: tmp_path / name for name in ("a.json", "b.json", "a.csv", "a.md", "a.jmh.json")}
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--rounds", "2", "--forks", "2", "--max-forks", "2",
                   "--round-time", "0.1", "-q", "--export-json", str(paths["a.json"]), "--export-json",
                   str(paths["b.json"]), "--export-csv", str(paths["a.csv"]), "--export-markdown", str(paths["a.md"]),
                   "--export-jmh", str(paths["a.jmh.json"]))
    assert done.returncode == 0, done.stderr
    # The answer first, then the table; -q: nothing on stderr.
    assert done.stdout.startswith("OpenSSL C loop, messages: AES-NI makes it ") and not done.stderr
    assert "\njvmbridge " in done.stdout
    first = json.loads(paths["a.json"].read_text())
    assert first == json.loads(paths["b.json"].read_text()) and len(first["results"]) == 2
    assert paths["a.csv"].read_text().count("\n") == 3 and "| 1 |" in paths["a.md"].read_text()
    jmh = json.loads(paths["a.jmh.json"].read_text())
    assert [entry["params"]["setting"] for entry in jmh] == ["AES-NI-on", "AES-NI-off"]
    assert jmh[0]["benchmark"] == "jvmbridge.OpenSSL_C_loop_jvmbridge.message"
    assert jmh[0]["primaryMetric"]["score"] == first["results"][0]["jmh_score"]  # JMH's own figure
    refused = run_cli("jdks", "--export-csv", str(tmp_path / "no" / "such.csv"))
    assert refused.returncode == 2 and "no such folder" in refused.stderr
