"""Run as root, a file a JVM option names (--jvm-arg) is checked as --classpath is: an agent, a boot
class path, a flags file, an options file in another user's folder would run their code as root
(jvmbridge.jvm.optionfiles). Split by tier: the JVM that would load them is in
tests/integration/test_root_paths.py."""
from __future__ import annotations

import os
import subprocess

import pytest
from helpers import TENANT

from jvmbridge.jvm.optionfiles import UntrustedOption, check_option_files

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: only root refuses")


@pytest.mark.parametrize("option", [
    "-javaagent:{f}/agent.jar=opts", "-agentpath:{f}/agent.so", "-Xbootclasspath/a:/usr/share/java:{f}/boot.jar",
    "-XX:Flags={f}/flags", "-XX:VMOptionsFile={f}/vm.options", "-XX:CompileCommandFile={f}/commands",
    "-XX:SharedArchiveFile={f}/app.jsa", "-Djava.security.properties=={f}/java.security",
    "-Djava.ext.dirs={f}", "-Djvmci.class.path.append={f}/graal.jar", "--module-path={f}",
    "--patch-module=java.base={f}/patch.jar"])
def test_each_option_naming_a_users_file_is_refused(folder, option):
    (folder / "theirs").mkdir()
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder / "theirs")], check=True)
    with pytest.raises(UntrustedOption, match=f"is owned by uid {TENANT}.*copy it where only root can change it"):
        check_option_files([option.format(f=folder / "theirs"), "-version"])


@pytest.mark.parametrize("words", [["-cp", "{f}/app.jar", "Main"], ["-p", "{f}", "-m", "app/Main"],
                                   ["-jar", "{f}/app.jar"]])
def test_options_taking_the_next_word_are_checked_up_to_the_main_class(folder, words):
    (folder / "theirs").mkdir()
    subprocess.run(["chown", "-hR", f"{TENANT}:{TENANT}", str(folder / "theirs")], check=True)
    with pytest.raises(UntrustedOption, match=f"is owned by uid {TENANT}"):
        check_option_files([word.format(f=folder / "theirs") for word in words])
    # What follows the main class is the program's own: not a JVM option.
    check_option_files(["-cp", "/usr/share/java", "Main", f"-javaagent:{folder / 'theirs'}/agent.jar"])


def test_an_argfile_a_relative_path_or_an_agentlib_path_is_refused_and_roots_files_pass(folder):
    (folder / "jvm.options").write_text("-Xmx64m\n")
    with pytest.raises(UntrustedOption, match="no @argfile is read; give its options with --jvm-arg"):
        check_option_files([f"@{folder / 'jvm.options'}"])
    with pytest.raises(UntrustedOption, match="agent.jar is not a whole path"):
        check_option_files(["-javaagent:agent.jar"])
    with pytest.raises(UntrustedOption, match="a library by name only"):
        check_option_files([f"-agentlib:{folder}/x"])
    with pytest.raises(UntrustedOption, match="give a plain path"):
        check_option_files(["-Djava.security.properties=file:/etc/x"])
    check_option_files([f"-XX:Flags={folder / 'jvm.options'}", "-agentlib:jdwp=transport=dt_socket",
                        "-XX:-UseAES", "-Dfoo=/tmp/anything", "-cp", f"{folder}/*", "Main"])
