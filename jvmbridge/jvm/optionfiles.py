"""Which JVM options root passes on from the user (--jvm-arg), and how.

Options make a JVM load code and write files, and a deny-list kept missing new spellings. So as root
every option must be of a form naming no file, class, library, command or module (-XX: flags from a
list, :func:`allowed`); with --trust-jvm-arg anything passes, each named file checked and given as
its real path. Every JVM goes through :func:`admitted_options`. Not root: nothing is refused."""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Sequence

from jvmbridge.forks.parent import WorkerError
from jvmbridge.trust.launch import TRUST_JVM_ARGS
from jvmbridge.trust.paths import NotTrusted, trusted_path

TRUST_OPTION = "--trust-jvm-arg"


class UntrustedOption(WorkerError):
    """A JVM option root will not pass on (a form not allowed, or a file another user can change)."""


def trust_any_jvm_arg(given: bool) -> None:
    """Set whether --trust-jvm-arg was given, kept as a -X option that trust.launch.python_command
    passes to the Python children (the JPype worker admits its options again)."""
    if given:
        sys._xoptions[TRUST_JVM_ARGS] = True
    else:
        sys._xoptions.pop(TRUST_JVM_ARGS, None)


def any_jvm_arg_trusted() -> bool:
    return TRUST_JVM_ARGS in sys._xoptions


# -XX flags root takes by name: for AES intrinsics and the JIT, none writing or loading a file (globals.hpp);
# a boolean may write one (DumpPerfMapAtExit), so the form says nothing.
_FLAGS = frozenset((
    "UseAES", "UseAESIntrinsics", "UseAESCTRIntrinsics", "UseGHASHIntrinsics", "UseSHA", "UseSHA1Intrinsics",
    "UseSHA256Intrinsics", "UseSHA512Intrinsics", "UseSHA3Intrinsics", "UseSIMDForSHA3Intrinsic", "UseMD5Intrinsics",
    "UseChaCha20Intrinsics", "UsePoly1305Intrinsics", "UseIntPolyIntrinsics", "UseKyberIntrinsics",
    "UseDilithiumIntrinsics", "UseBASE64Intrinsics", "UseCRC32Intrinsics", "UseCRC32CIntrinsics",
    "UseAdler32Intrinsics", "UseVectorizedMismatchIntrinsic", "UseMultiplyToLenIntrinsic",
    "UseSquareToLenIntrinsic", "UseMulAddIntrinsic", "UseMontgomeryMultiplyIntrinsic",
    "UseMontgomerySquareIntrinsic", "UseCLMUL", "UseSSE", "UseAVX", "UseSSE42Intrinsics", "UseBMI1Instructions",
    "UseBMI2Instructions", "UseFMA", "UnlockDiagnosticVMOptions", "UnlockExperimentalVMOptions",
    "PrintFlagsFinal", "PrintFlagsInitial", "PrintCommandLineFlags", "PrintIntrinsics", "PrintCompilation",
    "PrintInlining", "TieredCompilation", "TieredStopAtLevel", "UseCompiler", "BackgroundCompilation",
    "CompilationMode", "DisableIntrinsic", "ControlIntrinsic", "UseBranchProtection", "CICompilerCount",
    "CICompilerCountPerCPU", "ReservedCodeCacheSize", "SegmentedCodeCache", "CompileThreshold",
    "CompileThresholdScaling", "Tier3InvocationThreshold", "Tier3CompileThreshold", "Tier3BackEdgeThreshold",
    "Tier4InvocationThreshold", "Tier4CompileThreshold", "Tier4BackEdgeThreshold", "UseOnStackReplacement",
    "Inline", "MaxInlineSize", "FreqInlineSize", "NeverActAsServerClassMachine", "AlwaysActAsServerClassMachine",
    "UseSerialGC", "UseParallelGC", "UseG1GC", "MaxHeapSize", "InitialHeapSize", "MinHeapSize", "NewSize",
    "MaxNewSize", "MaxRAMPercentage", "InitialRAMPercentage", "MinRAMPercentage", "AlwaysPreTouch",
    "UseTransparentHugePages", "ActiveProcessorCount", "CrashOnOutOfMemoryError", "ExitOnOutOfMemoryError"))
# Those whose value is a word or list of words, naming no file.
_WORD_FLAGS = frozenset(("CompilationMode", "DisableIntrinsic", "ControlIntrinsic", "UseBranchProtection"))
_NUMBER = re.compile(r"-?(0x[0-9a-fA-F]+|\d+(\.\d+)?[kKmMgGtT]?)")
_WORDS = re.compile(r"[\w.+,-]*")
_SIZED = ("-Xmx", "-Xms", "-Xmn", "-Xss")
_PLAIN = frozenset(("-Xint", "-Xcomp", "-Xbatch", "-Xmixed", "-ea", "-da", "-esa", "-dsa", "-enableassertions",
                    "-disableassertions", "-enablesystemassertions", "-disablesystemassertions", "-version",
                    "-showversion", "-Xshare:off", "-Xshare:auto", "--enable-native-access=ALL-UNNAMED"))
# The JVM's own streams, not a file.
_LOG_OUTPUTS = ("", "stdout", "stderr", "#0", "#1")
# None: a property may name a file, class or JDK to whatever reads it.
_PROPERTIES: frozenset[str] = frozenset()


def allowed(word: str) -> bool:
    """Whether ``word`` names no file, class, library, command or module (-XX: only :data:`_FLAGS`)."""
    if word in _PLAIN:
        return True
    if word.startswith(_SIZED):
        return bool(_NUMBER.fullmatch(word[4:]))
    if word.startswith("-XX:"):
        return _allowed_flag(word[4:])
    if word == "-Xlog" or word.startswith("-Xlog:"):
        return _allowed_log(word)
    if word.startswith("-D"):
        return word[2:].partition("=")[0] in _PROPERTIES
    return False


def _allowed_flag(setting: str) -> bool:
    """Whether a -XX: ``setting`` is one of :data:`_FLAGS` with a number, or a :data:`_WORD_FLAGS` word."""
    name, equals, value = setting.partition("=")
    if not equals:
        return name[:1] in ("+", "-") and name[1:] in _FLAGS
    return name in _FLAGS and bool(_NUMBER.fullmatch(value) or name in _WORD_FLAGS and _WORDS.fullmatch(value))


def _allowed_log(word: str) -> bool:
    """Whether an -Xlog option writes to the JVM's own streams only."""
    fields = word[len("-Xlog:"):].split(":")
    # A quote lets an output name hold colons: refused, as any file=.
    return (len(fields) < 2 or fields[1] in _LOG_OUTPUTS) and '"' not in word and "file=" not in word


def refusal(word: str) -> UntrustedOption:
    return UntrustedOption(
        f"{word}: run as root, a JVM option is taken only in a form that names no file, class or library "
        "(-Xmx<size>, -Xint, -Xlog to stdout or stderr...), and a -XX: flag only by name, one that writes and loads "
        "nothing (the AES intrinsics', the JIT compilers', the heap's...); "
        f"to pass it anyway, its files checked: {TRUST_OPTION}")


def admitted_options(options: Sequence[str]) -> list[str]:
    """``options`` as the JVM gets them: unchanged when not root; as root, UntrustedOption for one not
    :func:`allowed`, unless --trust-jvm-arg: then real paths, each checked (:func:`trusted_options`)."""
    if os.geteuid() != 0:
        return list(options)
    if any_jvm_arg_trusted():
        return trusted_options(options, main_class_ends=False)
    for word in options:
        if not allowed(word):
            raise refusal(word)
    return list(options)


def admitted_arguments(arguments: Sequence[str]) -> list[str]:
    """A launcher's ``arguments`` admitted up to the main class; -cp passes when it names what only
    root can change (the harness, --classpath), as real paths."""
    if os.geteuid() != 0:
        return list(arguments)
    if any_jvm_arg_trusted():
        return trusted_options(arguments, main_class_ends=True)
    words, index = list(arguments), 0
    while index < len(words):
        word = words[index]
        if word in ("-cp", "-classpath", "--class-path") and index + 1 < len(words):
            words[index + 1] = os.pathsep.join(_checked(word, path) for path in words[index + 1].split(os.pathsep))
            index += 2
        elif not word.startswith(("-", "@")):  # the main class
            break
        elif not allowed(word):
            raise refusal(word)
        else:
            index += 1
    return words


def trusted_options(arguments: Sequence[str], main_class_ends: bool) -> list[str]:
    """``arguments`` with each named file or folder as its checked real path (folders whole);
    UntrustedOption for one others can change, a relative one, or an unchecked way of naming files."""
    words = list(arguments)
    named: dict[int, list[tuple[int, str, str]]] = {}
    for index, start, option, path in named_files(words, main_class_ends):
        named.setdefault(index, []).append((start, option, path))
    for index, paths in named.items():
        word, cursor = words[index], 0
        for start, option, path in paths:
            real = _checked(option, path)
            at = word.index(path, max(start, cursor))
            word = word[:at] + real + word[at + len(path):]
            cursor = at + len(real)
        words[index] = word
    return words


def _checked(option: str, path: str) -> str:
    if not os.path.isabs(path):
        raise UntrustedOption(f"{option}: {path} is not a whole path; run as root, give it from /")
    wildcard = path.endswith("/*")
    try:
        real = str(trusted_path(path.removesuffix("/*") if wildcard else path, option, whole_tree=True))
    except NotTrusted as e:
        raise UntrustedOption(f"{e}; copy it where only root can change it") from None
    return real + "/*" if wildcard else real


# Value in the next word (or after "="): a path or a PATH-separated list.
_NEXT_PATHS = ("-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path")
# Value in the next word, naming no file.
_NEXT_OTHER = ("--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
               "--enable-native-access", "--source", "-d", "--describe-module")
# Two-dash options taking no value (`java --help`, `--help-extra`).
_FLAGS_OTHER = ("--dry-run", "--validate-modules", "--show-version", "--show-module-resolution", "--enable-preview",
                "--disable-@files", "--list-modules", "--version", "--full-version", "--help", "--help-extra")
# Prefixes whose rest is a PATH-separated list of files or folders.
_PATH_LISTS = ("-Xbootclasspath/a:", "-Xbootclasspath/p:", "-Xbootclasspath:", "-XX:SharedArchiveFile=",
               "-XX:AOTLibrary=", "-XX:JVMCILibPath=")
# Prefixes whose rest is one file.
_FILES = ("-XX:Flags=", "-XX:VMOptionsFile=", "-XX:CompileCommandFile=", "-XX:CompilerDirectivesFile=",
          "-XX:SharedClassListFile=", "-XX:AOTCache=", "-XX:AOTConfiguration=", "-splash:")
# A file, then "=options".
_AGENTS = ("-javaagent:", "-agentpath:")
# Properties holding a PATH-separated list a JVM loads from.
_PATH_PROPERTIES = ("java.class.path", "java.ext.dirs", "java.endorsed.dirs", "java.library.path", "java.home",
                    "sun.boot.class.path", "sun.boot.library.path", "jdk.module.path", "jdk.module.upgrade.path",
                    "java.security.properties", "java.security.policy", "java.util.logging.config.file")


def named_files(arguments: Sequence[str], main_class_ends: bool = True) -> Iterator[tuple[int, int, str, str]]:
    """(word index, where the path starts at the earliest, option, path) for each file the options
    name, up to the main class when ``main_class_ends``; UntrustedOption for unchecked ways."""
    index = 0
    while index < len(arguments):
        word = arguments[index]
        if word.startswith("@"):
            raise UntrustedOption(f"{word}: run as root, no @argfile is read; give its options with --jvm-arg")
        if not word.startswith("-") or word in ("-jar", "-m", "--module"):
            if not main_class_ends:
                raise UntrustedOption(f"{word}: not a JVM option")
            if word == "-jar" and index + 1 < len(arguments):
                yield index + 1, 0, word, arguments[index + 1]
            return  # the main class: what follows is the program's own
        if word in _NEXT_PATHS or word == "--patch-module":
            following = arguments[index + 1] if index + 1 < len(arguments) else ""
            paths = following.partition("=")[2] if word == "--patch-module" else following
            yield from ((index + 1, 0, word, path) for path in paths.split(os.pathsep))
            index += 2
            continue
        if word.startswith("--") and word.partition("=")[0] not in (*_NEXT_PATHS, *_NEXT_OTHER, *_FLAGS_OTHER,
                                                                      "--patch-module"):
            # An unlisted option may take the next word as its value, which would go unread.
            raise UntrustedOption(f"{word}: not a launcher option checked here")
        yield from ((index, start, option, path) for start, option, path in _in_option(word))
        index += 2 if word in _NEXT_OTHER else 1


def _in_option(word: str) -> Iterator[tuple[int, str, str]]:
    name, _, value = word.partition("=")
    if name in _NEXT_PATHS and value:  # --module-path=PATHS
        yield from ((len(name), name, path) for path in value.split(os.pathsep))
    elif name == "--patch-module":  # --patch-module=MODULE=PATHS
        yield from ((word.index("=", len(name) + 1), name, path) for path in value.partition("=")[2].split(os.pathsep))
    elif word.startswith(_AGENTS):
        prefix = next(prefix for prefix in _AGENTS if word.startswith(prefix))
        yield len(prefix), prefix, word[len(prefix):].partition("=")[0]
    elif word.startswith("-agentlib:"):
        library = word[len("-agentlib:"):].partition("=")[0]
        if "/" in library:  # by name, it is found in the JDK's lib (checked with the JDK) or root's
            raise UntrustedOption(f"-agentlib:{library}: a library by name only; give a path with -agentpath:")
    elif word.startswith("-Xrun"):  # lib<name>.so, searched from the JVM's folder: an agent by another name
        raise UntrustedOption(f"{word}: run as root, give an agent with -agentpath:")
    elif word.startswith(_PATH_LISTS):
        prefix = next(prefix for prefix in _PATH_LISTS if word.startswith(prefix))
        yield from ((len(prefix), prefix, path) for path in word[len(prefix):].split(os.pathsep))
    elif word.startswith(_FILES):
        prefix = next(prefix for prefix in _FILES if word.startswith(prefix))
        yield len(prefix), prefix, word[len(prefix):]
    elif word.startswith("-D"):
        yield from ((len(name) + 1, option, path) for option, path in _in_property(name[2:], value))


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
