"""The worker's side of forks.parent, in the child process: its main (serve), which reads the
request and writes the result into the file the parent reads, and the parts of a request measured
in turn (each_part), the result saved whole after each."""
from __future__ import annotations

import faulthandler
import functools
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Callable

from jvmbridge.forks.parent import WorkerError, remove_jvm_files
from jvmbridge.trust.writer import replace_whole

# Writes a child's result where parent.run_child reads it; a later call replaces an earlier, partial one.
Save = Callable[[dict], None]


def each_part(request: dict, measure: Callable[[Any], dict], shared: dict, save: Save) -> dict:
    """The child's side of parent.run_forks: ``measure`` each part of ``request`` in turn, given the
    request's own fields beside the part's; a part that fails says why and the rest still run. The
    result is ``shared`` with every part's answer, saved with serve's ``save`` after each part, so a
    crash or Ctrl-C in a later part keeps the earlier ones. The first part warms up for
    warmup_min_seconds, later ones (the process already warm) for later_warmup_min_seconds where
    the request gives it. ``measure`` takes its worker's part type (forks.protocol): the part
    with the request's fields beside it."""
    answers: list[dict] = []
    first = {key: value for key, value in request.items() if key != "parts"}
    later = {**first, "warmup_min_seconds": request.get("later_warmup_min_seconds", first.get("warmup_min_seconds"))}
    for number, part in enumerate(request["parts"]):
        try:
            answers.append(measure({**(later if number else first), **part}))
        except WorkerError as e:
            answers.append({"error": str(e)})
        save({**shared, "parts": answers})
    return {**shared, "parts": answers}


def serve(handler: Callable[[dict, Save], dict]) -> None:
    """The child's main: read the request, run ``handler`` (given ``save`` for partial results),
    write its result or its error."""
    # parent.run_child asks with it where a child that stopped making progress hung.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    save = functools.partial(_save, sys.argv[1])
    request = json.load(sys.stdin)
    try:
        result, status = handler(request, save), 0
    except WorkerError as e:
        result, status = {"error": str(e)}, 1
    save(result)
    sys.stdout.flush()
    # os._exit: a started JVM's shutdown can hang or crash after the result is safely written; what
    # the JVM's exit would have removed is removed here.
    remove_jvm_files(os.getpid())
    os._exit(status)


def _save(path: str, result: dict) -> None:
    """Write ``result`` whole or not at all: a crash mid-write must not leave half a file."""
    replace_whole(Path(path), json.dumps(result))
