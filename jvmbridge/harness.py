"""Locate the compiled Java harness, compiling it from ``java/`` in a checkout. Standard library
only (jvmbridge.trust imported late): ``setup.py`` loads this file to build the wheels' jar."""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

JAR_NAME = "jvmbridge-harness.jar"
PACKAGED_JAR = Path(__file__).resolve().parent / "_harness" / JAR_NAME
# The -javaagent a server runs: its classes and the known-answer cases' only (as build.gradle's guardJar).
GUARD_JAR_NAME = "jvmbridge-guard.jar"
PACKAGED_GUARD_JAR = PACKAGED_JAR.parent / GUARD_JAR_NAME
GUARD_PACKAGES = ("jvmbridge/guard", "jvmbridge/vectors")
GUARD_MANIFEST = ("Manifest-Version: 1.0\nPremain-Class: jvmbridge.guard.GuardAgent\n"
                  "Agent-Class: jvmbridge.guard.GuardAgent\n")
SOURCE_ROOT = Path(__file__).resolve().parent.parent / "java" / "src" / "main" / "java"
# JPype 1.7 needs Java 11+: the harness targets the same floor.
JAVA_RELEASE = "11"
# A source of ours is a few KiB.
_SOURCE_LIMIT = 1 << 20


class HarnessUnavailable(RuntimeError):
    """Neither a packaged harness jar nor the means to build one."""


def java_sources(root: Path = SOURCE_ROOT, packages: Sequence[str] = ()) -> list[Path]:
    """The sources under ``root``; with ``packages`` (folders under it), theirs alone."""
    return sorted(path for folder in ([root / package for package in packages] or [root])
                  for path in folder.rglob("*.java"))


def build_jar(destination: Path, source_root: Path = SOURCE_ROOT, javac: str | None = None,
              packages: Sequence[str] = (), manifest: str | None = None) -> Path:
    """Compile the sources with ``javac --release 11`` into a jar (``packages``: those alone)."""
    sources = java_sources(source_root, packages)
    if not sources:
        raise HarnessUnavailable(f"no Java sources under {source_root}")
    from jvmbridge.trust.launch import run
    from jvmbridge.trust.writer import open_folder, replace_whole

    javac = javac or _find_javac()
    with tempfile.TemporaryDirectory(prefix="jvmbridge-javac-") as classes:
        done = run([javac, "--release", JAVA_RELEASE, "-d", classes, *map(str, sources)], capture_output=True,
                   text=True)
        if done.returncode != 0:
            raise HarnessUnavailable(f"javac failed: {done.stderr.strip()}")
        # Made here, a jar (a zip) needs no JDK `jar` tool.
        with zipfile.ZipFile(built := io.BytesIO(), "w", zipfile.ZIP_DEFLATED) as jar:
            if manifest:
                jar.writestr("META-INF/MANIFEST.MF", manifest)
            for path in sorted(Path(classes).rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
    os.close(open_folder(destination.parent, make=True))  # setup.py's build folder may not be there yet
    # Whole, so no JVM loads half a jar; world-readable: servers' JVMs of any user load the guard jar.
    replace_whole(destination, built.getvalue(), mode=0o644)
    return destination


def harness_jar() -> Path:
    """The packaged jar, or one compiled from the checkout's sources into a per-user cache."""
    return PACKAGED_JAR if PACKAGED_JAR.is_file() else checkout_jar()


def guard_jar() -> Path:
    """The guard's agent jar: packaged, or compiled from the checkout's sources into the cache."""
    return PACKAGED_GUARD_JAR if PACKAGED_GUARD_JAR.is_file() else checkout_jar(packages=GUARD_PACKAGES)


def checkout_jar(cache: Path | None = None, source_root: Path = SOURCE_ROOT, packages: Sequence[str] = ()) -> Path:
    """A checkout's jar in ``cache``, compiled when missing, named by the sources' digest. As root, a
    cache another user can change is refused: JVMs would load their classes."""
    sources = java_sources(source_root, packages)
    if not sources:
        raise HarnessUnavailable(
            "the Java harness is missing from this installation; reinstall jvmbridge with a JDK present"
        )
    from jvmbridge.trust.bounded import read_regular_file  # imported late: setup.py loads this file alone

    digest = hashlib.sha256()
    for path in sources:
        digest.update(read_regular_file(path, _SOURCE_LIMIT))
    cached = _trusted((cache or cache_dir()) / f"{'guard' if packages else 'harness'}-{digest.hexdigest()[:16]}.jar",
                      "the Java harness")
    if cached.is_file():
        return cached
    jdk = _trusted(Path(os.path.realpath(_find_javac())).parent.parent, "javac's JDK", whole_tree=True)
    return build_jar(cached, source_root, str(jdk / "bin" / "javac"), packages, GUARD_MANIFEST if packages else None)


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/jvmbridge, made 0700; as root, refused where another user can change it."""
    from jvmbridge.trust.paths import NotTrusted, private_folder  # imported late: setup.py loads this file alone

    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    try:
        return private_folder(Path(base) / "jvmbridge", "the cache folder")
    except NotTrusted as e:
        raise HarnessUnavailable(str(e)) from None


def _trusted(path: Path, what: str, whole_tree: bool = False) -> Path:
    """``path``'s real path; as root, HarnessUnavailable where another user can change it."""
    from jvmbridge.trust.paths import NotTrusted, trusted_path  # imported late: setup.py loads this file alone

    try:
        return trusted_path(path, what, whole_tree)
    except NotTrusted as e:
        raise HarnessUnavailable(str(e)) from None


def _find_javac() -> str:
    from jvmbridge.trust.launch import search_path  # imported late: setup.py loads this file by path

    java_home = os.environ.get("JAVA_HOME")
    candidates = [Path(java_home) / "bin" / "javac"] if java_home else []
    found = shutil.which("javac", path=os.pathsep.join(search_path()))
    if found:
        candidates.append(Path(found))
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise HarnessUnavailable("javac not found: install a JDK (not only a JRE) to build the Java harness")
