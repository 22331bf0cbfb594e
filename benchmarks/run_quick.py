"""Run every benchmark script in quick mode, so none rots as the code under it moves (.ci/run runs this).

Each runs as `python benchmarks/NAME.py --quick --json FILE`, against this checkout's jvmbridge, in
a temporary folder that is also its working directory and TMPDIR, with an XDG_DATA_HOME of its own
there (where compare saves runs), removed at the end. Fails if a script fails or its FILE is not
strict JSON with its figures. Prints each script's seconds. Quick mode checks that a script runs,
not its figures, so --jobs 2 (.ci/run's) runs two at a time.

    python benchmarks/run_quick.py [--jobs N] [NAME ...]   (default: every script, one at a time)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
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


def run_one(script: Path, folder: Path, env: dict[str, str]) -> bool:
    """Runs one script in quick mode and prints its line; True when it passed."""
    output = folder / f"{script.stem}.json"
    started = time.monotonic()
    # A data folder of its own: what one script saves (runs, the yardstick's reference) another does not read.
    env = {**env, "XDG_DATA_HOME": str(folder / "data" / script.stem)}
    done = subprocess.run([sys.executable, str(script), "--quick", "--json", str(output)], cwd=folder, env=env,
                          capture_output=True, text=True)
    seconds = time.monotonic() - started
    problem = f"exit {done.returncode}" if done.returncode else problem_with(output)
    skipped = next((line for line in done.stdout.splitlines() if line.startswith("skipped: ")), "")
    # One print per script, its output with it: lines of scripts running at once do not interleave.
    print(f"{seconds:6.1f} s  {script.name}  {f'FAILED: {problem}' if problem else skipped or 'ok'}"
          + (f"\n{done.stdout[-3000:]}{done.stderr[-3000:]}" if problem else ""), flush=True)
    return not problem


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1, help="scripts run at once (default 1)")
    parser.add_argument("names", nargs="*", metavar="NAME", help="scripts to run (default: every one)")
    arguments = parser.parse_args()
    chosen = scripts(arguments.names)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="jvmbridge-quick-") as scratch:
        folder = Path(scratch)
        (folder / "tmp").mkdir()
        env = {**os.environ, "TMPDIR": str(folder / "tmp"),
               # this checkout's jvmbridge, wherever another is installed
               "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")]))}
        with ThreadPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
            passed = dict(zip(chosen, pool.map(lambda script: run_one(script, folder, env), chosen)))
    failed = [script.name for script, ok in passed.items() if not ok]
    # The load says how busy the (often shared) machine was, which the seconds depend on.
    print(f"{time.monotonic() - started:6.1f} s  in all ({arguments.jobs} at a time), load average "
          f"{os.getloadavg()[0]:.1f} at the end; " + (f"FAILED: {', '.join(failed)}" if failed else f"{len(chosen)} scripts ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
