"""Every module imports on its own in a fresh interpreter: no import-order dependence, no cycle
held together by which module happened to load first."""
from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import REPO

PACKAGE = REPO / "jvmbridge"
# Left out: fleet/callback_plugins/*, which Ansible loads beside the play, not as part of the package:
# `import jvmbridge.fleet.callback_plugins.jvmbridge_unchecked` fails without Ansible (the `fleet`
# extra), and that is fine for a plug-in only Ansible loads; and __main__, whose import runs the CLI.
MODULES = sorted(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
                 for path in PACKAGE.rglob("*.py") if "callback_plugins" not in path.parts and path.name != "__main__.py")


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module):
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr[-2000:]
