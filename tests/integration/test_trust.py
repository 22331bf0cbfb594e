"""Run as root, jvmbridge runs no JDK, javac or C loop that another user can change.

Split by tier: here what needs a process; the rest is in tests/unit/test_trust.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from helpers import TENANT, jdk_homes, planted_jdk, run_cli

from jvmbridge import compare

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")


@pytest.fixture
def tenant_jdk(folder):
    """A JDK (the real launcher, the rest linked to the machine's) in a folder uid TENANT owns."""
    jdk = planted_jdk(folder / "jdk", jdk_homes()[0], str(folder / "jcmd-ran"))
    subprocess.run(["chown", "-R", f"{TENANT}:{TENANT}", str(folder)], check=True)
    return jdk


def test_a_tenant_jdk_named_by_root_is_refused_in_one_line_unless_trusted(tenant_jdk):
    done = run_cli("check", "--java", str(tenant_jdk), "--mode", "cbc", "--no-verify")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"jvmbridge: error: JDK {tenant_jdk}: {tenant_jdk.parent} is owned by uid {TENANT}, so root will not run it; "
        f"to run it anyway: --java {tenant_jdk} --trust-jdk-owner"]
    trusted = run_cli("check", "--java", str(tenant_jdk), "--trust-jdk-owner", "--mode", "cbc", "--no-verify",
                      "--format", "json")
    assert trusted.returncode in (0, 1), trusted.stderr
    assert json.loads(trusted.stdout)["jdks"][0]["java_home"] == str(tenant_jdk)


def test_all_jdks_leaves_a_tenant_jdk_out_and_says_so_in_the_document(tenant_jdk):
    # JAVA_HOME is one of the places discovery looks.
    done = run_cli("check", "--all-jdks", "--mode", "cbc", "--no-verify", "--mode-time", "5", "--format", "json",
                   env={**os.environ, "JAVA_HOME": str(tenant_jdk)})
    assert done.returncode == 2, done.stderr  # could not tell everywhere: one JDK was not run
    assert not list(tenant_jdk.parent.glob("jcmd-ran"))
    jdks = {jdk["java_home"]: jdk for jdk in json.loads(done.stdout)["jdks"]}
    refused = jdks[str(tenant_jdk)]
    assert refused["error"] == (f"JDK {tenant_jdk}: {tenant_jdk.parent} is owned by uid {TENANT}, so root will not "
                                f"run it; to run it anyway: --java {tenant_jdk} --trust-jdk-owner")
    assert {v["status"] for v in refused["verdicts"]} == {"unknown"}
    assert "error" not in jdks[str(jdk_homes()[0])]  # the rest checked
    assert str(tenant_jdk) not in done.stderr  # said once, in the document
    table = run_cli("check", "--all-jdks", "--mode", "cbc", "--no-verify", "--mode-time", "5",
                    env={**os.environ, "JAVA_HOME": str(tenant_jdk)})
    assert f"  error: JDK {tenant_jdk}: " in table.stdout and table.stdout.count("so root will not run it") == 1


def test_root_loads_no_c_loop_or_harness_from_a_cache_another_user_owns(folder):
    os.chown(folder, TENANT, TENANT)
    env = {**os.environ, "XDG_CACHE_HOME": str(folder)}
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--quiet", "--round-time", "0.1", "--rounds", "3",
                   "--max-forks", "2", "-o", str(folder / "run.jsonl"), env=env)
    refused = f"the cache folder {folder}/jvmbridge: {folder} is owned by uid {TENANT}, so root will not use it"
    assert done.returncode == 2 and done.stderr.splitlines() == [f"jvmbridge: error: engine c-loop cannot run: {refused}"]
    done = run_cli("check", "--mode", "cbc", env=env)
    assert done.returncode == 2 and done.stderr.splitlines() == [f"jvmbridge: error: {refused}"], done.stderr
    assert not list(folder.rglob("*.so")) and not list(folder.rglob("*.jar"))


def test_root_loads_no_classpath_jar_another_user_can_change(folder, planted_jar):
    jar = folder / "planted.jar"
    shutil.copy(planted_jar, jar)
    os.chown(jar, TENANT, TENANT)
    marker = folder / "loaded"  # the planted provider makes it when a JVM loads its cipher
    said = f"jvmbridge: error: --classpath {jar}: {jar} is owned by uid {TENANT}, so root will not run it; " \
           "copy it where only root can change it"
    for command in (["compare", "--no-interleave", "--shape", "message", "--engine", "jvm", "--cipher", "aes-128-ctr", "--rounds", "1", "--max-forks", "1",
                     "--trust-jvm-arg", f"--jvm-arg=-Dplanted.marker={marker}"],
                    ["verify", "--mode", "ctr", "--quick", "--trust-jvm-arg", f"--jvm-arg=-Dplanted.marker={marker}"],
                    ["guard", "--java", "java", "--mode", "ctr"]):
        done = run_cli(*command, "--provider", "planted.PlantedProvider", "--classpath", f"{planted_jar}:{jar}")
        assert done.returncode == 2 and done.stdout == "", (command, done.stdout)
        assert done.stderr.splitlines() == [said], command
    assert not marker.exists()
    with pytest.raises(ValueError, match=f"--classpath {jar}: .* so root will not run it"):
        compare(engine="jvm", provider="planted.PlantedProvider", classpath=str(jar))
    missing = run_cli("compare", "--engine", "jvm", "--classpath", str(folder / "none.jar"))
    assert missing.returncode == 2 and missing.stderr.splitlines() == [
        f"jvmbridge: error: --classpath {folder / 'none.jar'}: no such jar or folder"]
