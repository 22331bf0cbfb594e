"""Compiles the Java harness (and the guard's agent jar) into the package at build time, so wheels
carry them and a server with only a JRE can run jvmbridge. Everything else about the package lives in pyproject.toml."""
import importlib.util
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _harness_module():
    # Loaded by path: the package's dependencies are not installed yet at build time. The modules it
    # imports late (jvmbridge.trust, standard library only) come from this tree.
    sys.path.insert(0, str(ROOT))
    spec = importlib.util.spec_from_file_location("_jvmbridge_harness", ROOT / "jvmbridge" / "harness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithHarness(build_py):
    def run(self):
        super().run()
        harness = _harness_module()
        destination = Path(self.build_lib) / "jvmbridge" / "_harness" / harness.JAR_NAME
        harness.build_jar(destination, source_root=ROOT / "java" / "src" / "main" / "java")
        harness.build_jar(destination.with_name(harness.GUARD_JAR_NAME), ROOT / "java" / "src" / "main" / "java",
                          packages=harness.GUARD_PACKAGES, manifest=harness.GUARD_MANIFEST)


setup(cmdclass={"build_py": BuildPyWithHarness})
