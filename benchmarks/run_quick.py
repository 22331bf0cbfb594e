"""Run every benchmark script in quick mode, so none rots as the code under it moves (.ci/run runs this).

Each runs as `python benchmarks/NAME.py --quick --json FILE`, one after the other, against this
checkout's jvmbridge, in a temporary folder that is also its working directory, TMPDIR and
XDG_DATA_HOME (where compare saves runs), removed at the end. Fails if a script fails or its FILE is
not strict JSON with its figures. Prints each script's seconds.

    python benchmarks/run_quick.py [NAME ...]   (default: every script)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts(names: list[str]) -> list[Path]:
    """The scripts named, or every one (not this runner, not _common.py)."""
    if names:
        return [HERE / (name if name.endswith(".py") else f"{name}.py") for name in names]
    return sorted(path for path in HERE.glob("*.py") if not path.name.startswith("_") and path != Path(__file__).resolve())


def problem_with(output: Path) -> str | None:
    """Why a script's JSON file is not what --json promises, or None."""
    def no_constant(name: str):
        raise ValueError(f"{name} is not JSON")
    try:
        document = json.loads(output.read_text(), parse_constant=no_constant)
    except (OSError, ValueError) as e:
        return f"{output.name}: {e}"
    if not isinstance(document, dict) or not isinstance(document.get("figures"), (dict, list)):
        return f"{output.name}: no figures"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME", help="scripts to run (default: every one)")
    chosen = scripts(parser.parse_args().names)
    failed = []
    total = 0.0
    with tempfile.TemporaryDirectory(prefix="jvmbridge-quick-") as scratch:
        folder = Path(scratch)
        (folder / "tmp").mkdir()
        env = {**os.environ, "XDG_DATA_HOME": str(folder / "data"), "TMPDIR": str(folder / "tmp"),
               # this checkout's jvmbridge, wherever another is installed
               "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))}
        for script in chosen:
            output = folder / f"{script.stem}.json"
            started = time.monotonic()
            done = subprocess.run([sys.executable, str(script), "--quick", "--json", str(output)], cwd=folder, env=env,
                                  capture_output=True, text=True)
            seconds = time.monotonic() - started
            total += seconds
            problem = f"exit {done.returncode}" if done.returncode else problem_with(output)
            skipped = next((line for line in done.stdout.splitlines() if line.startswith("skipped: ")), "")
            print(f"{seconds:6.1f} s  {script.name}  {f'FAILED: {problem}' if problem else skipped or 'ok'}", flush=True)
            if problem:
                failed.append(script.name)
                print(f"{done.stdout[-3000:]}{done.stderr[-3000:]}", file=sys.stderr)
    # The load says how busy the (often shared) machine was, which the seconds depend on.
    print(f"{total:6.1f} s  in all, load average {os.getloadavg()[0]:.1f} at the end; "
          + (f"FAILED: {', '.join(failed)}" if failed else f"{len(chosen)} scripts ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
