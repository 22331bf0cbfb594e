"""Find the JVM a user means: a ``java`` binary or a JAVA_HOME, else JAVA_HOME, else ``java`` on PATH."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

# JDK 9+ layout first; JDK 8 kept its VM under jre/ (JPype 1.7 cannot drive Java 8, but we
# still find it so the user hears that reason rather than "not a JVM").
_LIBJVM_CANDIDATES = ("lib/server/libjvm.so", "jre/lib/amd64/server/libjvm.so", "lib/server/libjvm.dylib")


class JvmNotFound(ValueError):
    """A path that is not a JVM, or no JVM at all."""


@dataclass(frozen=True)
class JavaInstall:
    home: Path
    libjvm: Path
    release_version: str  # JAVA_VERSION from $JAVA_HOME/release; "unknown" when absent

    @property
    def label(self) -> str:
        return f"{self.home.name} ({self.release_version})"


def resolve_java(path: str | os.PathLike) -> JavaInstall:
    """A JavaInstall for a ``java`` binary, a JAVA_HOME, or a name on PATH such as ``java``."""
    given = Path(path)
    # A bare name such as "java" means the command on PATH, not a folder that happens to be here.
    on_path = shutil.which(str(path)) if os.sep not in str(path) else None
    given = Path(on_path) if on_path else given
    if not given.exists():
        raise JvmNotFound(f"{path}: no such file or directory")
    resolved = given.resolve()
    home = resolved if resolved.is_dir() else resolved.parent.parent
    for candidate in _LIBJVM_CANDIDATES:
        if (home / candidate).is_file():
            return JavaInstall(home=home, libjvm=home / candidate, release_version=_release_version(home))
    raise JvmNotFound(f"{path}: not a JVM (no libjvm under {home})")


def default_java() -> JavaInstall:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        return resolve_java(java_home)
    if shutil.which("java"):
        return resolve_java("java")
    raise JvmNotFound("no JVM found: set JAVA_HOME, put `java` on PATH, or pass --java PATH")


def _release_version(home: Path) -> str:
    release = home / "release"
    if release.is_file():
        for line in release.read_text(errors="replace").splitlines():
            if line.startswith("JAVA_VERSION="):
                return line.split("=", 1)[1].strip().strip('"')
    return "unknown"
