"""Files a JVM option names: run as root, each must be one no other user can change.

`--classpath` is checked (trust.paths), but a JVM loads code from files its options name too: an
agent (`-javaagent:`, `-agentpath:`), a boot class path, a flags or options file, a CDS archive,
a module path, security properties naming providers. Named by root in `--jvm-arg` (an app's
`jvm.options`, an agent jar in the app user's folder), a user's file there runs as root. So every
JVM jvmbridge starts (java_command, the JPype worker) has its options checked here, each file as
`--classpath` is, a folder whole. An `@argfile` is refused when run as root: the launcher reads it
with its own quoting rules, and options read differently here than there would go unchecked; give
its options with --jvm-arg.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from jvmbridge.forks.parent import WorkerError
from jvmbridge.trust.paths import NotTrusted, trusted_path


class UntrustedOption(WorkerError):
    """A JVM option naming a file another user can change, or that root cannot check: the JVM does
    not start, as when it refuses its options itself."""


# Options whose value is the next word (or after "="): one path, or a PATH-separated list of them.
_NEXT_PATHS = ("-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path")
# Options whose value is the next word but names no file (`java --help`): not the main class.
_NEXT_OTHER = ("--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
               "--enable-native-access", "--source")
# Prefixes whose rest is a PATH-separated list of files or folders.
_PATH_LISTS = ("-Xbootclasspath/a:", "-Xbootclasspath/p:", "-Xbootclasspath:", "-XX:SharedArchiveFile=",
               "-XX:AOTLibrary=", "-XX:JVMCILibPath=")
# Prefixes whose rest is one file.
_FILES = ("-XX:Flags=", "-XX:VMOptionsFile=", "-XX:CompileCommandFile=", "-XX:CompilerDirectivesFile=",
          "-XX:SharedClassListFile=", "-XX:AOTCache=", "-XX:AOTConfiguration=", "-splash:")
# Agents: a file, then "=options".
_AGENTS = ("-javaagent:", "-agentpath:")
# System properties whose value is a PATH-separated list of files or folders a JVM loads from.
_PATH_PROPERTIES = ("java.class.path", "java.ext.dirs", "java.endorsed.dirs", "java.library.path",
                    "sun.boot.class.path", "sun.boot.library.path", "jdk.module.path", "jdk.module.upgrade.path",
                    "java.security.properties", "java.security.policy", "java.util.logging.config.file")


def check_option_files(arguments: Sequence[str]) -> None:
    """UntrustedOption when, run as root, an option of ``arguments`` (a JVM's, up to its main class)
    names a file or folder another user can change, a relative one (which depends on the JVM's
    folder), or is an @argfile."""
    if os.geteuid() != 0:
        return
    for option, path in named_files(arguments):
        if not path:
            continue
        if not os.path.isabs(path):
            raise UntrustedOption(f"{option}: {path} is not a whole path; run as root, give it from /")
        try:
            trusted_path(path.removesuffix("/*") if path.endswith("/*") else path, option, whole_tree=True)
        except NotTrusted as e:
            raise UntrustedOption(f"{e}; copy it where only root can change it") from None


def named_files(arguments: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(option, path) for each file or folder the options in ``arguments`` name, up to the main class
    (-jar's jar included); UntrustedOption for what names files in a way not checked here."""
    index = 0
    while index < len(arguments):
        word = arguments[index]
        following = arguments[index + 1] if index + 1 < len(arguments) else ""
        if word.startswith("@"):
            raise UntrustedOption(f"{word}: run as root, no @argfile is read; give its options with --jvm-arg")
        if word == "-jar":
            yield word, following
            return
        if word in ("-m", "--module") or not word.startswith("-"):  # the main class: what follows is its own
            return
        if word in _NEXT_PATHS:
            yield from ((word, path) for path in following.split(os.pathsep))
            index += 2
            continue
        index += 2 if word in _NEXT_OTHER else 1
        yield from _in_option(word)


def _in_option(word: str) -> Iterator[tuple[str, str]]:
    name, _, value = word.partition("=")
    if name in _NEXT_PATHS and value:  # --module-path=PATHS
        yield from ((name, path) for path in value.split(os.pathsep))
    elif name == "--patch-module":  # --patch-module=MODULE=PATHS
        yield from ((name, path) for path in value.partition("=")[2].split(os.pathsep))
    elif word.startswith(_AGENTS):
        prefix = next(prefix for prefix in _AGENTS if word.startswith(prefix))
        yield prefix, word[len(prefix):].partition("=")[0]
    elif word.startswith("-agentlib:"):
        library = word[len("-agentlib:"):].partition("=")[0]
        if "/" in library:  # by name, it is found in the JDK's lib (checked with the JDK) or root's
            raise UntrustedOption(f"-agentlib:{library}: a library by name only; give a path with -agentpath:")
    elif word.startswith(_PATH_LISTS):
        prefix = next(prefix for prefix in _PATH_LISTS if word.startswith(prefix))
        yield from ((prefix, path) for path in word[len(prefix):].split(os.pathsep))
    elif word.startswith(_FILES):
        prefix = next(prefix for prefix in _FILES if word.startswith(prefix))
        yield prefix, word[len(prefix):]
    elif word.startswith("-D"):
        yield from _in_property(name[2:], value)


def _in_property(name: str, value: str) -> Iterator[tuple[str, str]]:
    if name not in _PATH_PROPERTIES and not name.startswith("jvmci."):
        return
    value = value.removeprefix("=")  # java.security.properties==FILE: replaces the JDK's own
    if "${" in value or "://" in value or value.startswith("file:"):  # expanded or fetched by the JVM itself
        raise UntrustedOption(f"-D{name}={value}: run as root, give a plain path")
    for path in value.split(os.pathsep):
        # jvmci.* names a compiler or a path: the paths (with a "/") are checked.
        if not name.startswith("jvmci.") or "/" in path:
            yield f"-D{name}", path
