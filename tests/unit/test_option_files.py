"""Run as root, --jvm-arg is an allow-list (jvmbridge.jvm.optionfiles): only options that name no file,
class or library pass; with --trust-jvm-arg any option does, each file it names checked as --classpath
is and handed to the JVM by its real path. Split by tier: the JVM that would load them is in
tests/integration/test_root_paths.py."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest
from helpers import TENANT

from jvmbridge.engines.jvm import heap_share
from jvmbridge.intrinsics.modes import MODES
from jvmbridge.jvm.optionfiles import UntrustedOption, admitted_arguments, admitted_options, trust_any_jvm_arg
from jvmbridge.jvm.options import AES_FLAGS, INTRINSICS_OFF, UNLOCK_DIAGNOSTIC

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")

# What jvmbridge's users and its tests give; each must stay allowed.
ALLOWED = ["-XX:TieredStopAtLevel=1", "-XX:UseSSE=2", "-XX:UseAVX=2", "-XX:-UseAES", "-XX:+UnlockDiagnosticVMOptions",
           "-XX:-UseAESCTRIntrinsics", "-Xint", "-Xcomp", "-XX:CompilationMode=quick-only", "-Xmx20m", "-Xss1m",
           "-XX:+CrashOnOutOfMemoryError", "-ea", "-Xlog:gc", "-Xlog:jit+inlining=debug:stderr",
           "-XX:MaxRAMPercentage=50.0", "--enable-native-access=ALL-UNNAMED", "-XX:DisableIntrinsic=_aescrypt_encryptBlock",
           "-XX:+UseAESIntrinsics", "-XX:+UseGHASHIntrinsics", "-XX:+UseSHA", "-XX:+PrintFlagsFinal",
           "-XX:ControlIntrinsic=-_aescrypt_encryptBlock", "-XX:-TieredCompilation", "-XX:CompileThresholdScaling=0",
           "-XX:-UseCompiler", "-XX:ReservedCodeCacheSize=48m", "-XX:+NeverActAsServerClassMachine", "-XX:+UseSerialGC",
           "-XX:+UseParallelGC", "-XX:+UseTransparentHugePages", "-XX:+AlwaysPreTouch", "-XX:ActiveProcessorCount=1"]
# The second review's forms and their kin: each names a file, a library, a class or a module.
REFUSED = ["--patch-module", "--patch-module=jdk.zipfs=/usr/share", "-Xrun/../../tmp/evil", "-Xrunhprof",
           "-Djava.home=/tmp/jh", "-Dx=1", "-Xlog:gc:file=/tmp/gc.log", "-Xlog:gc:/tmp/gc.log",
           '-Xlog:"gc:file=/tmp/gc.log"', "-Xlog:gc::file=/tmp/gc.log", "-XX:LogFile=/tmp/x",
           "-XX:HeapDumpPath=/tmp/x", "-XX:StartFlightRecording=filename=/tmp/x.jfr", "-XX:ArchiveClassesAtExit=a",
           "-XX:Flags=1", "-XX:OnError=sh", "-XX:ErrorFile=/tmp/e", "-javaagent:/usr/share/java/a.jar",
           "-agentlib:jdwp=transport=dt_socket", "-Xbootclasspath/a:/usr/share/java", "-cp", "--module-path=/x",
           "-XX:CompileCommand=quiet", "-XX:CompilationMode=/tmp/x", "-splash:/tmp/x.png", "@/tmp/args", "Main",
           "-jar", "-Xmx1g/", "-XX:FlightRecorderOptions:repository=/tmp",
           # The third review's: booleans and numbers that write files (a perf map in /tmp, the JDK's CDS
           # archive, the VM's log), a relative file name as a number, a compiler loaded from a file.
           "-XX:+DumpPerfMapAtExit", "-XX:+DumpSharedSpaces", "-XX:+LogVMOutput", "-XX:AllocateHeapAt=1",
           "-XX:+UseJVMCICompiler", "-XX:+NoSuchFlag"]


@pytest.fixture
def trusted() -> Iterator[None]:
    trust_any_jvm_arg(True)
    yield
    trust_any_jvm_arg(False)


@pytest.mark.parametrize("option", ALLOWED)
def test_options_that_name_no_file_are_taken_as_root(option):
    assert admitted_options([option]) == [option]
    assert admitted_arguments([option, "-cp", "/usr/share/java", "Main"]) == [option, "-cp", "/usr/share/java", "Main"]


def test_the_options_jvmbridge_gives_its_own_jvms_are_taken_as_root():
    # Run as root they go through the same allow-list: the settings, the modes' flags (check tries them
    # on, verify off), the unlock, the flags listing and each JVM's share of the heap.
    own = [*INTRINSICS_OFF.options, UNLOCK_DIAGNOSTIC, "-XX:+PrintFlagsFinal", heap_share(3)]
    own += [f"-XX:{sign}{flag}" for mode in MODES.values() for flag in mode.flags for sign in "+-"]
    own += [f"-XX:{sign}{flag}" for flag in AES_FLAGS for sign in "+-"]
    assert admitted_options(own) == own


@pytest.mark.parametrize("option", REFUSED)
def test_every_other_option_is_refused_in_one_line_naming_it_and_the_way_to_pass_it(option):
    # A java launcher's -cp and main class are jvmbridge's own (the test above, and the one below).
    for admit in (admitted_options,) if option in ("-cp", "Main") else (admitted_options, admitted_arguments):
        with pytest.raises(UntrustedOption) as refused:
            admit(["-XX:-UseAES", option, "-javaagent:/tmp/agent.jar"])
        assert str(refused.value).startswith(f"{option}: run as root, a JVM option is taken only in a form that names "
                                             "no file"), str(refused.value)
        assert str(refused.value).endswith("--trust-jvm-arg") and "\n" not in str(refused.value)


def test_the_launchers_own_class_path_must_be_roots_and_goes_by_its_real_path(folder):
    (folder / "real").mkdir()
    (folder / "link").symlink_to(folder / "real")
    assert admitted_arguments(["-cp", f"{folder}/link", "Main", "-javaagent:x"]) == ["-cp", f"{folder}/real", "Main",
                                                                                  "-javaagent:x"]
    (folder / "theirs").mkdir()
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder / "theirs")], check=True)
    with pytest.raises(UntrustedOption, match=f"is owned by uid {TENANT}"):
        admitted_arguments(["-cp", f"{folder}/theirs", "Main"])


@pytest.mark.parametrize("option", [
    "-javaagent:{f}/agent.jar=opts", "-agentpath:{f}/agent.so", "-Xbootclasspath/a:/usr/share/java:{f}/boot.jar",
    "-XX:Flags={f}/flags", "-XX:VMOptionsFile={f}/vm.options", "-XX:CompileCommandFile={f}/commands",
    "-XX:SharedArchiveFile={f}/app.jsa", "-Djava.security.properties=={f}/java.security",
    "-Djava.ext.dirs={f}", "-Djvmci.class.path.append={f}/graal.jar", "--module-path={f}",
    "--patch-module=java.base={f}/patch.jar", "-Djava.home={f}"])
def test_trusted_each_option_naming_a_users_file_is_refused(folder, trusted, option):
    (folder / "theirs").mkdir()
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder / "theirs")], check=True)
    with pytest.raises(UntrustedOption, match=f"is owned by uid {TENANT}.*copy it where only root can change it"):
        admitted_arguments([option.format(f=folder / "theirs"), "-version"])


@pytest.mark.parametrize("words", [["-cp", "{f}/app.jar", "Main"], ["-p", "{f}", "-m", "app/Main"],
                                   ["-jar", "{f}/app.jar"], ["--patch-module", "jdk.zipfs={f}", "Main"]])
def test_trusted_options_taking_the_next_word_are_checked_up_to_the_main_class(folder, trusted, words):
    (folder / "theirs").mkdir()
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder / "theirs")], check=True)
    with pytest.raises(UntrustedOption, match=f"is owned by uid {TENANT}"):
        admitted_arguments([word.format(f=folder / "theirs") for word in words])
    # What follows the main class is the program's own: not a JVM option.
    admitted_arguments(["-cp", "/usr/share/java", "Main", f"-javaagent:{folder / 'theirs'}/agent.jar"])


def test_trusted_a_launcher_option_not_known_here_or_a_bare_word_among_options_is_refused(trusted):
    # --patch-module's kin: a two-word option read here as one would hide the next word from the check.
    with pytest.raises(UntrustedOption, match="--new-option: not a launcher option checked here"):
        admitted_arguments(["--new-option", "x", "-javaagent:/tmp/agent.jar"])
    with pytest.raises(UntrustedOption, match="abort: not a JVM option"):
        admitted_options(["abort"])


def test_trusted_paths_go_to_the_jvm_as_checked_never_as_typed(folder, trusted):
    (folder / "agent.jar").write_bytes(b"")
    (folder / "l.jar").symlink_to(folder / "agent.jar")
    (folder / "lib").mkdir()
    (folder / "libs").symlink_to(folder / "lib")
    assert admitted_options([f"-javaagent:{folder}/l.jar=a", f"-Xbootclasspath/a:{folder}/libs:{folder}/l.jar",
                             "-Dx=1"]) == [f"-javaagent:{folder}/agent.jar=a",
                                           f"-Xbootclasspath/a:{folder}/lib:{folder}/agent.jar", "-Dx=1"]


def test_trusted_an_argfile_a_relative_path_an_agentlib_path_or_xrun_is_refused_and_roots_files_pass(folder, trusted):
    (folder / "jvm.options").write_text("-Xmx64m\n")
    with pytest.raises(UntrustedOption, match="no @argfile is read; give its options with --jvm-arg"):
        admitted_arguments([f"@{folder / 'jvm.options'}"])
    with pytest.raises(UntrustedOption, match="agent.jar is not a whole path"):
        admitted_arguments(["-javaagent:agent.jar"])
    with pytest.raises(UntrustedOption, match="a library by name only"):
        admitted_arguments([f"-agentlib:{folder}/x"])
    with pytest.raises(UntrustedOption, match="give an agent with -agentpath:"):
        admitted_arguments(["-Xrun/../../tmp/evil"])
    with pytest.raises(UntrustedOption, match="give a plain path"):
        admitted_arguments(["-Djava.security.properties=file:/etc/x"])
    admitted_arguments([f"-XX:Flags={folder / 'jvm.options'}", "-agentlib:jdwp=transport=dt_socket",
                        "-XX:-UseAES", "-Dfoo=/tmp/anything", "-cp", f"{folder}/*", "Main"])
