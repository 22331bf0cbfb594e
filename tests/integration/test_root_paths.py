"""Run as root, a path is resolved once, checked whole (owners, modes, ACLs), and only its real
path is used after: a user who repoints their link once a worker starts, or who holds an ACL
entry on a root-owned folder, gets nothing run or written as root.

Split by tier: here what needs a process; the rest is in tests/unit/test_root_paths.py."""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import TENANT, agent_jar, jdk_homes, planted_jdk, run_cli, run_cli_as, stop_jvm, tenant_folder, write_acl

from jvmbridge.harness import guard_jar, harness_jar
from jvmbridge.native.c_loop import SOURCE as C_LOOP_SOURCE

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")


def test_a_jdk_whose_bin_carries_a_tenant_acl_entry_is_refused(folder):
    jdk = planted_jdk(folder / "jdk", jdk_homes()[0], str(folder / "jcmd-ran"))
    write_acl(jdk / "bin", TENANT)
    done = run_cli("check", "--java", str(jdk), "--mode", "cbc", "--no-verify")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.splitlines() == [
        f"jvmbridge: error: JDK {jdk}: {jdk / 'bin'} is writable by uid {TENANT} (an ACL entry), so root will not "
        f"run it; to run it anyway: --java {jdk} --trust-jdk-owner"]


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


@pytest.mark.serial  # its watcher repoints at the first worker of any run on the machine
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
        done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "jvm", "--cipher", "aes-128-ctr", "--provider", "planted.PlantedProvider",
                       "--classpath", str(link), "--round-time", "0.1", "--rounds", "2", "--max-forks", "2",
                       "--quiet", "--format", "json", "-o", str(folder / "run.jsonl"))
    finally:
        stop.set()
        watcher.join(timeout=5)
    assert done.returncode == 0, done.stderr
    assert os.readlink(link) == str(evil)  # the link was swapped during the run
    assert not marker.exists(), f"their provider ran as {marker.read_text()}"


def test_a_cache_reached_through_another_users_link_is_refused_and_loads_nothing_of_theirs(folder):
    # Root's XDG_CACHE_HOME, as after `sudo -E`, is their link to a root-only folder: they could repoint
    # it once the worker starts (to their folder holding their library under the C loop's name), so root
    # does not follow a link another user placed, and says so.
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
    link.symlink_to(ours)
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(theirs)], check=True)
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--round-time", "0.1",
                   "--rounds", "2", "--max-forks", "2", "--quiet", "--format", "json", "-o", str(folder / "run.jsonl"),
                   env={**os.environ, "XDG_CACHE_HOME": str(link)})
    assert done.returncode == 2 and done.stderr.splitlines() == [
        f"jvmbridge: error: engine c-loop cannot run: the cache folder {link / 'jvmbridge'}: {link} is a link in a "
        f"folder another user can change ({theirs} is owned by uid {TENANT}), so root will not use it"], done.stderr
    assert not marker.exists(), f"their library ran as uid {marker.read_text()}"
    assert not (ours / "jvmbridge").exists()  # nothing made through their link


def test_a_runs_folder_another_user_owns_is_refused_and_the_run_still_printed(folder):
    os.chown(folder, TENANT, TENANT)
    done = run_cli("compare", "--no-interleave", "--shape", "message", "--engine", "c-loop", "--round-time", "0.1",
                   "--rounds", "2", "--forks", "1", "--max-forks", "1", "--host-name", "../../../x",
                   env={**os.environ, "XDG_DATA_HOME": str(folder)})
    assert done.returncode == 1 and "C loop" in done.stdout, done.stderr  # 1: not all saved, as documented
    assert (f"the runs folder {folder}/jvmbridge/runs: {folder} is owned by uid {TENANT}, "
            "so root will not use it") in done.stderr
    assert list(folder.rglob("*")) == []


def test_a_jdk_whose_lib_links_to_a_root_folder_holding_a_users_libjvm_is_refused(folder):
    # Issue 64, item 2: the walk did not enter folder links, so this JDK ran with their libjvm.so.
    real = jdk_homes()[0]
    jdk = planted_jdk(folder / "jdk", real, str(folder / "jcmd-ran"))
    elsewhere = folder / "elsewhere"
    (elsewhere / "server").mkdir(parents=True)
    for entry in (real / "lib").iterdir():
        if entry.name != "server":
            (elsewhere / entry.name).symlink_to(entry)
    for entry in (real / "lib" / "server").iterdir():
        (elsewhere / "server" / entry.name).symlink_to(entry)
    libjvm = elsewhere / "server" / "libjvm.so"
    libjvm.unlink()
    shutil.copy(real / "lib" / "server" / "libjvm.so", libjvm)
    (jdk / "lib").unlink()
    (jdk / "lib").symlink_to(elsewhere)
    os.chown(libjvm, TENANT, TENANT)
    done = run_cli("flags", "--java", str(jdk))
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.splitlines() == [
        f"jvmbridge: error: JDK {jdk}: {libjvm} is owned by uid {TENANT}, so root will not run it; "
        f"to run it anyway: --java {jdk} --trust-jdk-owner"]


def test_a_classpath_folder_whose_package_links_into_a_tree_holding_a_users_class_is_refused(folder):
    classes, elsewhere = folder / "classes", folder / "elsewhere" / "org"
    classes.mkdir()
    elsewhere.mkdir(parents=True)
    (elsewhere / "Theirs.class").write_bytes(b"\xca\xfe\xba\xbe")
    os.chown(elsewhere / "Theirs.class", TENANT, TENANT)
    (classes / "org").symlink_to(elsewhere)
    done = run_cli("compare", "--engine", "jvm", "--classpath", str(classes), "--sizes", "16")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert f"{elsewhere / 'Theirs.class'} is owned by uid {TENANT}" in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr


def _seen_by_others(path: Path) -> bool:
    """Whether a user other than the owner may read ``path``: every folder above it open to them."""
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in path.parents) and bool(
        os.stat(path).st_mode & stat.S_IROTH)


def _open_file(fd: Path) -> str:
    """What another process's open file descriptor points at; "" where it closed meanwhile."""
    try:
        return os.readlink(fd)
    except FileNotFoundError:
        return ""


@pytest.mark.parametrize("java", ["java", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"])
def test_the_guards_flight_recording_is_the_jvm_users_alone_and_gone_at_exit(java):
    # Issue 64, item 9: the default repository, /tmp/DATE_PID/*.jfr, 0644, listed the compiled methods.
    workload = ["-cp", str(harness_jar()), "jvmbridge.harness.AesWorkload", "60"]
    guarded = subprocess.Popen([java, f"-javaagent:{guard_jar()}=delay=0", *workload], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline, recordings = time.monotonic() + 60, []
        while not recordings and time.monotonic() < deadline:
            time.sleep(0.5)
            recordings = {Path(target) for fd in Path(f"/proc/{guarded.pid}/fd").iterdir()
                          if (target := _open_file(fd)).endswith(".jfr")}
        assert recordings, "the guard streamed no recording"
        assert not any(_seen_by_others(recording) for recording in recordings), recordings
    finally:
        stop_jvm(guarded)
    assert not any(recording.parent.parent.exists() for recording in recordings)  # the private folder too


_ALLOWED_ONLY = "run as root, a JVM option is taken only in a form that names no file, class or library"


@pytest.fixture(scope="module")
def tenants_agent() -> Iterator[tuple[Path, Path, Path]]:
    """(folder, marker, agent): a tenant's folder, all theirs, holding their agent (its premain appends the user
    it ran as to the marker) and a jvm.options naming it; compiled once for the nine cases below."""
    folder = tenant_folder()
    try:
        marker = folder / "ran-as"
        agent = agent_jar(folder, marker)
        (folder / "jvm.options").write_text(f"-javaagent:{agent}\n")
        subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder)], check=True)
        yield folder, marker, agent
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize("command", [("flags", "--name", "UseAES"), ("verify", "--quick", "--jdk-time", "1"),
                                     ("guard", "--wait-time", "5")], ids=["flags", "verify", "guard"])
@pytest.mark.parametrize("given", ["-javaagent", "@argfile", "trusted"])
def test_a_users_agent_named_in_jvm_arg_never_runs_as_root(tenants_agent, given, command):
    folder, marker, agent = tenants_agent
    option = f"@{folder / 'jvm.options'}" if given == "@argfile" else f"-javaagent:{agent}"
    trust = ["--trust-jvm-arg"] if given == "trusted" else []
    done = run_cli(command[0], "--java", str(jdk_homes()[0]), *trust, f"--jvm-arg={option}", *command[1:])
    assert not marker.exists(), f"their agent ran as {marker.read_text()}"
    assert done.returncode == 2 and done.stdout == "", done.stdout
    reason = (f"-javaagent: {agent}: {folder} is owned by uid {TENANT}, so root will not run it" if trust
              else f"{option}: {_ALLOWED_ONLY}")
    assert reason in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


def _library(folder: Path, marker: Path) -> Path:
    """A shared library whose constructor appends the uid it was loaded as to ``marker``."""
    source = folder / "evil.c"
    source.write_text("#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void ran(void) {\n"
                      f'  FILE *f = fopen("{marker}", "a"); if (f) {{ fprintf(f, "uid %d\\n", getuid()); fclose(f); }}\n}}\n')
    library = folder / "evil.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True, capture_output=True)
    return library


@pytest.mark.parametrize("form", ["--patch-module", "-Xrun", "-Djava.home"])
def test_the_second_reviews_options_are_refused_as_root_before_any_jvm_runs(folder, form):
    # --patch-module took its value for a main class, and every later option went unchecked; -Xrun
    # loads lib<name>.so from the JVM's folder; java.home names the JDK whose conf/ names providers.
    marker = folder / "ran-as"
    # What each form names, made for it alone (the agent is a javac run, the library a gcc one).
    words = {"--patch-module": lambda: ["--patch-module", "jdk.zipfs=/usr/share", f"-javaagent:{agent_jar(folder, marker)}"],
             "-Xrun": lambda: [f"-Xrun/../..{_library(folder, marker).with_suffix('')}"],
             "-Djava.home": lambda: [f"-Djava.home={folder}"]}[form]()
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder)], check=True)
    done = run_cli("flags", "--java", str(jdk_homes()[0]), *(f"--jvm-arg={word}" for word in words), "--name", "UseAES")
    assert not marker.exists(), f"their code ran as {marker.read_text()}"
    assert done.returncode == 2 and done.stderr.startswith(f"jvmbridge: error: {words[0]}: {_ALLOWED_ONLY}"), \
        done.stderr


@pytest.mark.parametrize("words", [["-Xlog:gc:file={link}::filecount=0"],
                                   ["-XX:+UnlockDiagnosticVMOptions", "-XX:+LogVMOutput", "-XX:LogFile={link}"]],
                         ids=["-Xlog", "-XX:LogFile"])
def test_a_log_named_in_jvm_arg_is_never_written_as_root_through_a_users_link(folder, tmp_path, words):
    victim = tmp_path / "victim"  # root's alone
    victim.write_text("root's")
    link = folder / "jvm.log"
    link.symlink_to(victim)
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder)], check=True)
    done = run_cli("flags", *(f"--jvm-arg={word.format(link=link)}" for word in words), "--name", "UseAES")
    assert victim.read_text() == "root's"
    assert done.returncode == 2 and _ALLOWED_ONLY in done.stderr, done.stderr


def test_a_flag_that_writes_a_perf_map_in_tmp_is_refused_as_root_and_writes_nothing_through_a_users_link(tmp_path):
    # -XX:+DumpPerfMapAtExit writes /tmp/perf-<pid>.map with fopen("w"): a boolean, yet it follows a
    # link the user planted at the name of the JVM's pid to come (the third review's T1).
    victim = tmp_path / "victim"  # root's alone
    victim.write_text("root's")
    before = set(Path("/tmp").glob("perf-*.map"))
    first = int(Path("/proc/sys/kernel/ns_last_pid").read_text()) + 1
    planted = [link for link in (Path(f"/tmp/perf-{pid}.map") for pid in range(first, first + 2000))
               if not os.path.lexists(link)]
    try:
        for link in planted:
            link.symlink_to(victim)
            os.lchown(link, TENANT, TENANT)
        done = run_cli("flags", "--java", str(jdk_homes()[0]), "--jvm-arg=-XX:+DumpPerfMapAtExit", "--name", "UseAES")
    finally:
        for link in planted:
            link.unlink(missing_ok=True)
        written = set(Path("/tmp").glob("perf-*.map")) - before
        for path in written:
            path.unlink()
    assert victim.read_text() == "root's" and not written, written
    assert done.returncode == 2 and done.stderr.startswith(f"jvmbridge: error: -XX:+DumpPerfMapAtExit: {_ALLOWED_ONLY}")
    assert done.stderr.rstrip().endswith("--trust-jvm-arg") and len(done.stderr.splitlines()) == 1, done.stderr


def test_trusted_an_agent_goes_to_the_jvm_by_the_real_path_checked_not_as_typed(folder):
    # A link the JVM would follow again after the check could lead elsewhere by then.
    marker = folder / "arguments"
    agent = agent_jar(folder, marker, records="java.lang.management.ManagementFactory.getRuntimeMXBean()"
                                              ".getInputArguments()")
    (folder / "typed.jar").symlink_to(agent)
    done = run_cli("flags", "--trust-jvm-arg", f"--jvm-arg=-javaagent:{folder / 'typed.jar'}", "--name", "UseAES")
    assert done.returncode == 0, done.stderr
    assert f"-javaagent:{agent}" in marker.read_text() and "typed.jar" not in marker.read_text()



def test_not_root_a_jvm_arg_of_any_form_is_passed(folder):
    # A user's own JVM runs as that user: an option naming a file hurts none but them.
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder)], check=True)
    done = run_cli_as(TENANT, "flags", "--jvm-arg=-Dtheirs=1", "--jvm-arg=-XX:-UseAES", "--name", "UseAES",
                      env={**os.environ, "HOME": str(folder), "XDG_CACHE_HOME": str(folder / "cache")})
    assert done.returncode == 0, done.stderr
    assert "command line" in done.stdout


def test_no_jvm_starts_where_its_crash_folder_cannot_be_written(tmp_path):
    # HotSpot writes its crash report to /tmp/hs_err_pid<pid>.log, through any link there, where the
    # -XX:ErrorFile folder cannot take it: a read-only cache (a bind mount here) must stop the run first.
    crashes = tmp_path / "cache" / "jvmbridge" / "crashes"
    crashes.mkdir(parents=True, mode=0o700)
    cache = tmp_path / "cache"
    subprocess.run(["mount", "--bind", str(cache), str(cache)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(cache)], check=True)
        done = run_cli("flags", env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    finally:
        subprocess.run(["umount", str(cache)], check=True)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.splitlines() == [
        f"jvmbridge: error: the crash report folder {crashes} cannot be written (a read-only file system?): "
        "a crashing JVM would write its report in /tmp instead"]
