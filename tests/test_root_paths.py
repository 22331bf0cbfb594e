"""Run as root, a path is resolved once, checked whole (owners, modes, ACLs), and only its real
path is used after: a user who repoints their link once a worker starts, or who holds an ACL
entry on a root-owned folder, gets nothing run or written as root."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import threading
import time
import zipfile
from pathlib import Path

import pytest

from helpers import REPO, TENANT, jdk_homes, planted_jdk, run_cli, tenant_folder
from jvmbridge.jvm.messages import java_command
from jvmbridge.native.c_loop import SOURCE as C_LOOP_SOURCE
from jvmbridge.saved.store import ResultWriter, file_name_part
from jvmbridge.trust import NotTrusted, changeable_by_others, private_folder, trusted_path

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")

# Linux's POSIX ACL xattr (acl_ea.h): version 2, then (tag, permissions, id) sorted by tag and id.
_EVERYONE = 0xFFFFFFFF


def write_acl(path: Path, writer_uid: int, attribute: str = "system.posix_acl_access") -> None:
    """Give uid ``writer_uid`` rwx on ``path`` by an ACL entry, as `setfacl -m u:UID:rwx` does;
    the mode bits `ls -l` shows stay root's (group r-x, as the mask is rwx: drwxrwxr-x+)."""
    entries = [(0x01, 7, _EVERYONE), (0x02, 7, writer_uid), (0x04, 5, _EVERYONE), (0x10, 7, _EVERYONE),
               (0x20, 5, _EVERYONE)]
    os.setxattr(path, attribute, struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries))


@pytest.fixture
def folder():
    made = tenant_folder()
    yield made
    shutil.rmtree(made)
    changeable_by_others.cache_clear()


@pytest.mark.fast
def test_an_acl_entry_for_another_user_is_a_writer_the_mode_bits_hide(folder):
    inner = folder / "jdk" / "bin"
    inner.mkdir(parents=True)
    assert changeable_by_others(folder / "jdk", whole_tree=True) is None
    write_acl(inner, TENANT)
    changeable_by_others.cache_clear()
    assert changeable_by_others(folder / "jdk", True) == f"{inner} is writable by uid {TENANT} (an ACL entry)"
    os.removexattr(inner, "system.posix_acl_access")
    write_acl(folder / "jdk", TENANT, "system.posix_acl_default")  # what root makes inside becomes theirs
    changeable_by_others.cache_clear()
    assert changeable_by_others(folder / "jdk", True) == (f"{folder / 'jdk'} is writable by uid {TENANT} "
                                                          "(a default ACL entry)")


def test_a_jdk_whose_bin_carries_a_tenant_acl_entry_is_refused(folder):
    jdk = planted_jdk(folder / "jdk", jdk_homes()[0], str(folder / "jcmd-ran"))
    write_acl(jdk / "bin", TENANT)
    done = run_cli("check", "--java", str(jdk), "--mode", "cbc", "--no-verify")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.splitlines() == [
        f"jvmbridge: error: JDK {jdk}: {jdk / 'bin'} is writable by uid {TENANT} (an ACL entry), so root will not "
        f"run it; to run it anyway: --java {jdk} --trust-jdk-owner"]


@pytest.mark.fast
def test_a_private_folder_is_its_real_path_made_0700_and_refused_where_another_user_can_change_it(folder):
    root_only = folder / "root-only"
    root_only.mkdir(mode=0o700)
    link = folder / "theirs" / "cache"
    link.parent.mkdir()
    link.symlink_to(root_only)
    os.chown(link.parent, TENANT, TENANT)
    # Through their link: the real path comes back, and it alone is used from here on.
    assert private_folder(link / "jvmbridge", "the cache folder") == root_only / "jvmbridge"
    assert (root_only / "jvmbridge").stat().st_mode & 0o777 == 0o700
    # A folder of theirs on the way, or one that is theirs already, is refused.
    with pytest.raises(NotTrusted, match=f"{link.parent} is owned by uid {TENANT}, so root will not use it"):
        private_folder(link.parent / "jvmbridge", "the cache folder")
    os.chown(root_only / "jvmbridge", TENANT, TENANT)
    with pytest.raises(NotTrusted, match=f"{root_only / 'jvmbridge'} is owned by uid {TENANT}"):
        private_folder(link / "jvmbridge", "the cache folder")


def _watch_and_repoint(link: Path, to: Path, worker: str, stop: threading.Event) -> threading.Thread:
    """A thread that repoints ``link`` to ``to`` the moment a process running module ``worker``
    appears: what a user watching `ps` does to root's run."""
    def watch():
        while not stop.is_set():
            for entry in Path("/proc").iterdir():
                try:
                    if worker.encode() in (entry / "cmdline").read_bytes():
                        swapped = link.with_name(link.name + ".new")
                        swapped.symlink_to(to)
                        os.replace(swapped, link)
                        return
                except OSError:
                    continue
            time.sleep(0.005)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher


def _provider_jar(folder: Path, marker: Path) -> Path:
    """A jar whose planted.PlantedProvider writes the user it ran as into ``marker`` when loaded."""
    source = folder / "src" / "planted" / "PlantedProvider.java"
    source.parent.mkdir(parents=True)
    source.write_text("package planted;\npublic final class PlantedProvider extends java.security.Provider {\n"
                      "  static { try (java.io.FileWriter w = new java.io.FileWriter(\"" + str(marker) + "\")) {\n"
                      "    w.write(System.getProperty(\"user.name\")); } catch (java.io.IOException e) { } }\n"
                      "  public PlantedProvider() { super(\"Theirs\", \"1.0\", \"theirs\"); }\n}\n")
    classes = folder / "classes"
    subprocess.run(["javac", "--release", "11", "-d", str(classes), str(source)], check=True, capture_output=True)
    jar = folder / "theirs.jar"
    with zipfile.ZipFile(jar, "w") as out:
        out.write(classes / "planted" / "PlantedProvider.class", "planted/PlantedProvider.class")
    return jar


def test_a_classpath_link_repointed_once_the_worker_starts_loads_nothing_of_theirs(folder, planted_jar):
    ours = folder / "root-only"
    ours.mkdir(mode=0o700)
    shutil.copy(planted_jar, ours / "provider.jar")
    theirs = folder / "theirs"
    theirs.mkdir()
    marker = theirs / "ran-as"
    evil = _provider_jar(theirs, marker)
    link = theirs / "lib.jar"
    link.symlink_to(ours / "provider.jar")
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(theirs)], check=True)
    stop = threading.Event()
    watcher = _watch_and_repoint(link, evil, "jvmbridge.jvm.worker", stop)
    try:
        done = run_cli("compare", "--engine", "jvm", "--cipher", "aes-128-ctr", "--provider", "planted.PlantedProvider",
                       "--classpath", str(link), "--round-time", "0.1", "--rounds", "2", "--max-forks", "2",
                       "--quiet", "--format", "json", "-o", str(folder / "run.jsonl"))
    finally:
        stop.set()
        watcher.join(timeout=5)
    assert done.returncode == 0, done.stderr
    assert os.readlink(link) == str(evil)  # the link was swapped during the run
    assert not marker.exists(), f"their provider ran as {marker.read_text()}"


def test_a_cache_link_repointed_once_the_c_worker_starts_loads_nothing_of_theirs(folder):
    ours = folder / "root-only"
    ours.mkdir(mode=0o700)
    theirs = folder / "theirs"
    (theirs / "jvmbridge").mkdir(parents=True)
    marker = theirs / "ran-as"
    library = theirs / "jvmbridge" / f"aesloop-{hashlib.sha256(C_LOOP_SOURCE.read_bytes()).hexdigest()[:16]}.so"
    (theirs / "evil.c").write_text('#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void '
                                   f'ran(void) {{ FILE *f = fopen("{marker}", "w"); fprintf(f, "%d", getuid()); '
                                   'fclose(f); }\n')
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(theirs / "evil.c")], check=True)
    link = theirs / "cache"
    link.symlink_to(ours)  # root's XDG_CACHE_HOME, as after `sudo -E`, is their link to a root-only folder
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(theirs)], check=True)
    stop = threading.Event()
    watcher = _watch_and_repoint(link, theirs, "jvmbridge.native.c_worker", stop)
    try:
        done = run_cli("compare", "--engine", "c-loop", "--round-time", "0.1", "--rounds", "2", "--max-forks", "2",
                       "--quiet", "--format", "json", "-o", str(folder / "run.jsonl"),
                       env={**os.environ, "XDG_CACHE_HOME": str(link)})
    finally:
        stop.set()
        watcher.join(timeout=5)
    assert done.returncode == 0, done.stderr
    assert os.readlink(link) == str(theirs)
    assert not marker.exists(), f"their library ran as uid {marker.read_text()}"
    assert list((ours / "jvmbridge").glob("aesloop-*.so"))  # built and loaded where root alone can write


@pytest.mark.fast
def test_every_jvm_jvmbridge_starts_writes_its_crash_reports_into_the_private_crash_folder(tmp_path):
    home = Path("/usr/lib/jvm/some-jdk")
    command = java_command(home, "-version")
    folder = trusted_path(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "jvmbridge" / "crashes",
                          "the crash report folder")
    assert command[0] == f"{home}/bin/java" and command[-1] == "-version"
    assert f"-XX:ErrorFile={folder}/hs_err_pid%p.log" in command
    assert folder.stat().st_mode & 0o777 == 0o700
    # Every place that starts a JVM as a process goes through java_command.
    package = REPO / "jvmbridge"
    builders = [str(path.relative_to(package)) for path in package.rglob("*.py")
                if '"bin" / "java"' in path.read_text() or "'bin' / 'java'" in path.read_text()]
    assert builders == ["jvm/messages.py"]


@pytest.mark.fast
def test_run_files_are_new_files_named_safely_and_never_reached_through_a_link(tmp_path, monkeypatch):
    import datetime
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    started = datetime.datetime(2026, 12, 4, 7, 0, tzinfo=datetime.timezone.utc)
    assert file_name_part("../../../x") == "_.._.._x" and "/" not in file_name_part("a/b")
    first = ResultWriter(None, "1", started, "../../../x")
    second = ResultWriter(None, "2", started, "../../../x")  # the same second: a file of its own
    for writer in (first, second):
        writer.write("run", metadata={})
        writer.close()
    runs = tmp_path / "data" / "jvmbridge" / "runs"
    assert [first.path, second.path] == [runs / "20261204T070000Z-_.._.._x.jsonl", runs / "20261204T070000Z-_.._.._x-2.jsonl"]
    assert [json.loads(p.read_text())["run_id"] for p in (first.path, second.path)] == ["1", "2"]
    assert runs.stat().st_mode & 0o777 == 0o700 and first.path.stat().st_mode & 0o777 == 0o600
    # A link planted at the name the user gave is not followed: the file it points to stays as it was.
    target = tmp_path / "roots-file"
    target.write_text("root's\n")
    (tmp_path / "out.jsonl").symlink_to(target)
    linked = ResultWriter(tmp_path / "out.jsonl", "3", started, "host")
    linked.write("run", metadata={})
    linked.close()
    assert target.read_text() == "root's\n"
    assert linked.error == f"{tmp_path / 'out.jsonl'}: Too many levels of symbolic links"


def test_a_runs_folder_another_user_owns_is_refused_and_the_run_still_printed(folder):
    os.chown(folder, TENANT, TENANT)
    done = run_cli("compare", "--engine", "c-loop", "--round-time", "0.1", "--rounds", "2", "--max-forks", "2",
                   "--host-name", "../../../x", env={**os.environ, "XDG_DATA_HOME": str(folder)})
    assert done.returncode == 1 and "C loop" in done.stdout, done.stderr  # 1: not all saved, as documented
    assert (f"the runs folder {folder}/jvmbridge/runs: {folder} is owned by uid {TENANT}, "
            "so root will not use it") in done.stderr
    assert list(folder.rglob("*")) == []


@pytest.mark.fast
def test_an_openssl_command_another_user_can_change_is_refused_before_it_runs(folder):
    theirs = folder / "bin" / "openssl"
    theirs.parent.mkdir()
    theirs.write_text(f"#!/bin/sh\nid > {folder}/ran-as\n")
    theirs.chmod(0o755)
    subprocess.run(["chown", "-R", f"{TENANT}:{TENANT}", str(folder / "bin")], check=True)
    done = run_cli("compare", "--engine", "openssl-cli", "--openssl", str(theirs), "--sizes", "16")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.splitlines() == [f"jvmbridge: error: --openssl {theirs}: {theirs.parent} is owned by uid "
                                        f"{TENANT}, so root will not run it; copy it where only root can change it"]
    assert not (folder / "ran-as").exists()
