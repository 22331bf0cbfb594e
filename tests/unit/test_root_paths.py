"""Run as root, a path is resolved once, checked whole (owners, modes, ACLs), and only its real
path is used after: a user who repoints their link once a worker starts, or who holds an ACL
entry on a root-owned folder, gets nothing run or written as root.

Split by tier: here what needs no JVM, OpenSSL, qemu, sshd or browser; the rest is in
tests/integration/test_root_paths.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers import REPO, TENANT, run_cli, write_acl

from jvmbridge.jvm.messages import java_command
from jvmbridge.saved.store import ResultWriter, file_name_part
from jvmbridge.trust.paths import NotTrusted, changeable_by_others, private_folder, trusted_path

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")


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


def test_a_private_folder_is_made_0700_and_refused_where_another_user_can_change_it_or_placed_a_link(folder):
    root_only = folder / "root-only"
    root_only.mkdir(mode=0o700)
    root_link = folder / "ours"
    root_link.symlink_to(root_only)
    link = folder / "theirs" / "cache"
    link.parent.mkdir()
    link.symlink_to(root_only)
    os.chown(link.parent, TENANT, TENANT)
    # Through root's own link: the real path comes back, and it alone is used from here on.
    assert private_folder(root_link / "jvmbridge", "the cache folder") == root_only / "jvmbridge"
    assert (root_only / "jvmbridge").stat().st_mode & 0o777 == 0o700
    # Their link is not followed, a folder of theirs on the way or one that is theirs already is refused.
    with pytest.raises(NotTrusted, match=f"{link} is a link in a folder another user can change"):
        private_folder(link / "jvmbridge", "the cache folder")
    with pytest.raises(NotTrusted, match=f"{link.parent} is owned by uid {TENANT}, so root will not use it"):
        private_folder(link.parent / "jvmbridge", "the cache folder")
    os.chown(root_only / "jvmbridge", TENANT, TENANT)
    with pytest.raises(NotTrusted, match=f"{root_only / 'jvmbridge'} is owned by uid {TENANT}"):
        private_folder(root_link / "jvmbridge", "the cache folder")


def test_a_users_link_in_a_sticky_cache_home_gets_no_folder_made_where_it_points(folder):
    # Root's XDG_CACHE_HOME (or HOME) is /tmp: a user's link there at the cache's name is never followed.
    sticky, target = folder / "sticky", folder / "root-only" / "target"
    sticky.mkdir()
    sticky.chmod(0o1777)
    target.parent.mkdir(mode=0o700)
    (sticky / "jvmbridge").symlink_to(target)
    os.lchown(sticky / "jvmbridge", TENANT, TENANT)
    with pytest.raises(NotTrusted, match=f"{sticky / 'jvmbridge'} is a link owned by uid {TENANT}"):
        private_folder(sticky / "jvmbridge", "the cache folder")
    assert not target.exists()
    (sticky / "jvmbridge").unlink()  # none there: root makes its own, which no user can rename in /tmp
    crashes = sticky / "jvmbridge" / "crashes"
    assert private_folder(crashes, "the crash report folder") == crashes
    assert (sticky / "jvmbridge").stat().st_mode & 0o7777 == 0o700


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


def test_a_folder_link_inside_a_tree_is_checked_as_a_tree_of_its_own(folder):
    # A JDK copy whose lib is a link to a root-owned folder holding a user's libjvm.so (issue 64, item 2).
    jdk, elsewhere = folder / "jdk", folder / "elsewhere" / "lib"
    (jdk / "bin").mkdir(parents=True)
    (elsewhere / "server").mkdir(parents=True)
    (elsewhere / "server" / "libjvm.so").write_bytes(b"")
    (jdk / "lib").symlink_to(elsewhere)
    (jdk / "src.zip").symlink_to(folder / "not-installed.zip")  # dangling, as Debian's: fine
    (elsewhere / "server" / "loop").symlink_to(jdk)  # a loop back to the top ends
    assert changeable_by_others(jdk, whole_tree=True) is None
    os.chown(elsewhere / "server" / "libjvm.so", TENANT, TENANT)
    changeable_by_others.cache_clear()
    assert changeable_by_others(jdk, True) == f"{elsewhere}/server/libjvm.so is owned by uid {TENANT}"
    with pytest.raises(NotTrusted, match="libjvm.so is owned by uid 4242, so root will not run it"):
        trusted_path(jdk, "JDK", whole_tree=True)


def test_a_link_inside_a_tree_is_followed_only_where_no_other_user_can_repoint_it(folder):
    # jdk/lib -> their folder's link -> a root-only folder: checked by the real path alone, it passes,
    # and they repoint their link once root has said yes.
    jdk, theirs, ours = folder / "jdk", folder / "theirs", folder / "ours"
    jdk.mkdir()
    ours.mkdir()
    theirs.mkdir()
    (theirs / "lib").symlink_to(ours)
    (jdk / "lib").symlink_to(theirs / "lib")
    assert changeable_by_others(jdk, whole_tree=True) is None
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(theirs)], check=True)
    changeable_by_others.cache_clear()
    assert changeable_by_others(jdk, True) == f"{theirs} is owned by uid {TENANT}"
    # In a folder everyone may add to (/tmp), a link of theirs is theirs to repoint.
    sticky = Path("/tmp") / f"jvmbridge-link-{os.getpid()}"
    sticky.symlink_to(ours)
    try:
        (jdk / "lib").unlink()
        (jdk / "lib").symlink_to(sticky)
        changeable_by_others.cache_clear()
        assert changeable_by_others(jdk, True) is None
        os.lchown(sticky, TENANT, TENANT)
        changeable_by_others.cache_clear()
        assert changeable_by_others(jdk, True) == f"{sticky} is a link owned by uid {TENANT}"
    finally:
        sticky.unlink()


def test_a_dangling_link_in_a_tree_passes_only_where_no_other_user_can_create_what_it_names(folder):
    # Root's classpath folder links p/ to a name not there yet in a sticky folder: a user creates it
    # (Evil.class) once root has looked, and root's JVM loads it.
    classes, sticky, ours = folder / "cp", folder / "sticky", folder / "ours"
    classes.mkdir()
    sticky.mkdir()
    sticky.chmod(0o1777)
    ours.mkdir()
    (classes / "p").symlink_to(sticky / "p")
    with pytest.raises(NotTrusted, match=f"{sticky / 'p'} does not exist and another user can create it "
                                         f"\\({sticky} is writable by every user\\)"):
        trusted_path(classes, "--classpath", whole_tree=True)
    (classes / "p").unlink()
    (classes / "p").symlink_to(ours / "p")  # only root can make ours/p: dangling, and fine
    assert trusted_path(classes, "--classpath", whole_tree=True) == classes


def test_a_missing_name_found_fine_is_checked_again_once_it_exists(folder):
    # The C loop's library is checked before it is built: "missing, root will make it" must not be
    # the answer once someone else made it.
    cache = folder / "cache"
    cache.mkdir(mode=0o700)
    assert changeable_by_others(cache / "aesloop.so") is None
    (cache / "aesloop.so").write_bytes(b"")
    os.chown(cache / "aesloop.so", TENANT, TENANT)
    assert changeable_by_others(cache / "aesloop.so") == f"{cache / 'aesloop.so'} is owned by uid {TENANT}"
    # And a name missing in a folder others may add to is no "root will make it".
    none = Path("/tmp") / f"jvmbridge-none-{os.getpid()}"
    assert changeable_by_others(none) == (f"{none} does not exist and another user can create it "
                                          "(/tmp is writable by every user)")


def test_root_reads_no_file_through_a_link_another_user_placed_and_quotes_nothing_of_it(folder, tmp_path):
    # Their a.jsonl -> a file only root may read: `flags --from` printed its first line in the error.
    secret = tmp_path / "secret"
    secret.write_text("root:$6$hunter2:20228:0:99999:7:::\n")
    secret.chmod(0o600)
    (folder / "a.jsonl").symlink_to(secret)
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder)], check=True)
    done = run_cli("flags", "--from", str(folder / "a.jsonl"))
    assert done.returncode == 2 and "hunter2" not in done.stdout + done.stderr, done.stderr
    assert done.stderr == f"jvmbridge: error: {folder / 'a.jsonl'}: a link in a folder another user can change " \
                          f"({folder} is owned by uid {TENANT})\n"


def test_debians_jdk_with_its_links_into_usr_share_and_etc_is_still_root_s_alone():
    jdks = [path for path in Path("/usr/lib/jvm").iterdir() if path.is_dir() and not path.is_symlink()]
    assert jdks
    for jdk in jdks:
        changeable_by_others.cache_clear()
        assert changeable_by_others(jdk, whole_tree=True) is None, jdk


SAVED_RUN = REPO / "tests" / "data" / "run-0.3.0.jsonl"


def test_report_plot_never_writes_through_a_link_another_user_planted(folder):
    pytest.importorskip("matplotlib", reason="needs matplotlib: pip install '.[plot]'")
    roots = folder / "roots-file"
    roots.write_text("root's\n")
    roots.chmod(0o600)
    theirs = folder / "theirs"
    theirs.mkdir()
    (theirs / "figure.png").symlink_to(roots)  # issue 64, item 6: root's 0600 file became a PNG
    os.chown(theirs, TENANT, TENANT)
    done = run_cli("report", str(SAVED_RUN), "--plot", str(theirs / "figure.png"))
    assert done.returncode != 0 and roots.read_text() == "root's\n"
    assert done.stderr.splitlines()[-1] == (f"jvmbridge: error: {theirs / 'figure.png'}: "
                                         "Too many levels of symbolic links")
    done = run_cli("report", str(SAVED_RUN), "--plot", str(folder / "figure.png"))
    assert done.returncode == 0, done.stderr
    assert (folder / "figure.png").stat().st_mode & 0o777 == 0o600


def test_an_export_folder_swapped_for_a_link_by_its_parents_owner_gets_nothing_written(folder):
    from jvmbridge.trust.writer import NotWritable, replace_whole

    # Issue 64, item 7: the parent's owner swaps the export folder for a link to a root-only folder.
    root_only = folder / "root-only"
    root_only.mkdir(mode=0o700)
    theirs = folder / "theirs"
    theirs.mkdir()
    (theirs / "textfile").symlink_to(root_only)
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(theirs)], check=True)
    with pytest.raises(NotWritable) as refused:
        replace_whole(theirs / "textfile" / "jvmbridge.prom", "# EOF\n", mode=0o644)
    assert f"{refused.value.filename}: {refused.value.strerror}" == (
        f"{theirs / 'textfile'}: a link in a folder another user can change ({theirs} is owned by uid {TENANT})")
    assert list(root_only.iterdir()) == []
    # Their own folder, no link: written there, as they may read it, and nowhere else.
    (theirs / "textfile").unlink()
    (theirs / "textfile").mkdir()
    replace_whole(theirs / "textfile" / "jvmbridge.prom", "# EOF\n", mode=0o644)
    assert (theirs / "textfile" / "jvmbridge.prom").read_text() == "# EOF\n"


def test_output_files_are_0600_and_never_a_fifo_another_users_file_or_a_hard_link(folder):
    from jvmbridge.trust.writer import NotWritable, open_for_writing

    # Issue 64, items 10 and 12: --output was 0644 (the JVM's -D options in it) and hung on a FIFO.
    fifo = folder / "out.json"
    os.mkfifo(fifo)
    done = run_cli("report", str(SAVED_RUN), "--format", "json", "-o", str(fifo), timeout=60)
    assert done.returncode != 0 and done.stderr.splitlines()[-1] == (
        f"jvmbridge: the document above was not saved: {fifo}: a FIFO, not a regular file: not written")
    fifo.unlink()
    assert run_cli("report", str(SAVED_RUN), "--format", "json", "-o", str(fifo)).returncode == 0
    assert fifo.stat().st_mode & 0o777 == 0o600
    # A file another user left where root writes (/tmp is everyone's): theirs to read, so not written.
    planted = folder / "planted.json"
    planted.write_text("theirs\n")
    os.chown(planted, TENANT, TENANT)
    with pytest.raises(NotWritable, match=f"owned by uid {TENANT}: root writes over none but its own files"):
        os.close(open_for_writing(planted))
    assert planted.read_text() == "theirs\n"
    os.link(folder / "out.json", folder / "second-name.json")
    with pytest.raises(NotWritable, match="other names"):
        os.close(open_for_writing(folder / "out.json"))


def test_in_a_folder_another_user_owns_root_replaces_its_own_file_there_by_a_new_0600_one(folder):
    from jvmbridge.trust.writer import NotWritable, open_for_writing

    # Root's 0644 metrics export in their folder; they rename it onto the name root writes its
    # document to next, and root's existing-file rule kept 0644 for them to read.
    theirs = folder / "theirs"
    theirs.mkdir()
    (theirs / "m.prom").write_text("# root's metrics\n")
    (theirs / "m.prom").chmod(0o644)
    os.chown(theirs, TENANT, TENANT)
    os.rename(theirs / "m.prom", theirs / "out.json")
    before = (theirs / "out.json").stat().st_ino
    done = run_cli("report", str(SAVED_RUN), "--format", "json", "-o", str(theirs / "out.json"), timeout=60)
    assert done.returncode == 0, done.stderr
    written = (theirs / "out.json").stat()
    assert (written.st_mode & 0o777, written.st_uid, written.st_ino != before) == (0o600, 0, True)
    assert json.loads((theirs / "out.json").read_text())
    assert sorted(path.name for path in theirs.iterdir()) == ["out.json"]
    with pytest.raises(NotWritable, match="root adds to no file already there: name a new one"):
        os.close(open_for_writing(theirs / "out.json", append=True))


def test_a_fifo_at_the_host_speed_reference_is_no_reference_and_no_hang(tmp_path):
    # Issue 64, item 12: compare hung reading a FIFO at host-speed.json in the data folder.
    data = tmp_path / "data" / "jvmbridge"
    data.mkdir(parents=True, mode=0o700)
    os.mkfifo(data / "host-speed.json")
    read = subprocess.run([sys.executable, "-c", "from jvmbridge.comparison.hostspeed import _read, reference_path; "
                           "print(_read(reference_path()))"], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")})
    assert read.returncode == 0 and read.stdout == "{}\n", read.stderr


def test_a_release_file_reached_through_a_link_out_of_the_jdk_is_not_shown(folder):
    from jvmbridge.jvm.discovery import resolve_java

    # Issue 64, item 8: a file everyone may read, in a folder only root may enter.
    hidden = folder / "root-only" / "release"
    hidden.parent.mkdir(mode=0o700)
    hidden.write_text('JAVA_VERSION="behind a 0700 folder"\n')
    hidden.chmod(0o644)
    jdk = folder / "jdk"
    for name in ("bin/java", "lib/server/libjvm.so"):
        (jdk / name).parent.mkdir(parents=True, exist_ok=True)
        (jdk / name).touch()
    (jdk / "release").symlink_to(hidden)
    assert resolve_java(jdk).release_version == "unknown"
    (jdk / "release").unlink()
    (jdk / "release").write_text('JAVA_VERSION="17.0.99"\n')
    assert resolve_java(jdk).release_version == "17.0.99"



def test_root_makes_its_folders_below_its_own_folder_in_the_sticky_tmp_and_in_tmp_itself():
    # /tmp is everyone's to add to, but none can rename or replace what root made there (the sticky bit).
    own = Path(tempfile.mkdtemp(dir="/tmp"))  # root's, 0700, right in /tmp: a runs folder's usual parent
    try:
        made = private_folder(own / "data" / "jvmbridge", "the runs folder")
        assert made == own / "data" / "jvmbridge" and made.stat().st_mode & 0o777 == 0o700
        assert private_folder(own, "the runs folder") == own
    finally:
        shutil.rmtree(own)
