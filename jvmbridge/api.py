"""The Python API: the same comparison as `jvmbridge compare`, returned as a pandas DataFrame."""
from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from jvmbridge.comparison.dimensioning import choose_rounds
from jvmbridge.comparison.request import CompareRequest, resolve_matrix
from jvmbridge.comparison.runner import Comparison, plan, run
from jvmbridge.engines import Matrix, default_engines
from jvmbridge.jvm.optionfiles import trust_any_jvm_arg
from jvmbridge.report.history import tidy_frame
from jvmbridge.sampling.policy import ROUND_SECONDS, TARGET_ERROR, Sampling
from jvmbridge.sampling.progress import Progress
from jvmbridge.sampling.workload import AESNITESTER_MESSAGE_BYTES, parse_count
from jvmbridge.saved import store
from jvmbridge.trust.launch import settle_scratch_folder


def run_comparison(request: CompareRequest, matrix: Matrix, progress: Progress | None = None,
                   output: Path | None = None, host_name: str | None = None, name: str | None = None,
                   began: float | None = None) -> Comparison:
    """``request``'s workloads on ``matrix``, what resolve_matrix found for it; its time limit counted
    from ``began`` (time.monotonic()), else from now."""
    jobs = plan(list(request.workloads), matrix)
    choose_rounds(jobs, host_name)
    return run(jobs, progress, output, host_name, name, request.time_limit, began)


def compare(iterations: int | float | str | None = None, *, round_time: float = ROUND_SECONDS,
            rounds: int | None = None, threads: int = Sampling.threads, forks: int | None = None,
            max_forks: int | None = None, target_error: float = TARGET_ERROR * 100, total_time: float | None = None,
            cipher: str | Iterable[str] = (), key_bits: int | None = None,
            sizes: int | str | Iterable[int] = AESNITESTER_MESSAGE_BYTES, shape: str | Iterable[str] = (),
            direction: str | Iterable[str] = "encrypt", engine: str | Iterable[str] = default_engines(),
            java: str | Iterable[str] = (), all_jdks: bool = False, trust_jdk_owner: bool = False,
            jvm_arg: str | Iterable[str] = (), trust_jvm_arg: bool = False, provider: str | Iterable[str] = "SunJCE",
            classpath: str | Iterable[str] = (),
            openssl: str | None = "openssl", openssl_arg: str | Iterable[str] = (), shared_jvm: bool = False,
            interleave: bool = True, output: str | Path | None = None, host_name: str | None = None, name: str | None = None,
            progress: Progress | None = None) -> pd.DataFrame:
    """One row per engine and setting, as `jvmbridge compare` with the same options under the same
    names (--round-time: ``round_time``; --target-error in percent; a repeatable option takes one
    value or several: ``cipher="aes-128-gcm"`` or ``cipher=["aes-128-gcm", "aes-256-ctr"]``; see
    :class:`jvmbridge.comparison.request.CompareRequest`). ``frame.attrs`` holds "metadata", "ratios",
    "findings", "failures" and "output" (the JSON-lines file the run was saved to, readable with :func:`load`).
    ``progress`` is called with a :class:`jvmbridge.sampling.progress.Update` when each configuration
    starts, after each of its forks and when it ends: its forks and interval so far, the time left.

    Raises ValueError for bad arguments (including a path that is not a JVM).
    """
    began = time.monotonic()  # a time limit counts the whole call
    settle_scratch_folder()  # as the command line does: run as root, no scratch folder in a user's $TMPDIR
    trust_any_jvm_arg(trust_jvm_arg)  # run as root, jvm_arg of any form (jvm.optionfiles), as --trust-jvm-arg
    request = CompareRequest(
        iterations=None if iterations is None else parse_count(iterations), round_time=round_time, rounds=rounds,
        threads=threads, forks=forks, max_forks=max_forks, target_error=target_error, total_time=total_time,
        cipher=_values(cipher),
        key_bits=key_bits, sizes=sizes if isinstance(sizes, (int, str)) else tuple(sizes), shape=_values(shape),
        direction=_values(direction), engine=_values(engine), java=_values(java), all_jdks=all_jdks,
        trust_jdk_owner=trust_jdk_owner, jvm_arg=_values(jvm_arg), provider=_values(provider),
        classpath=_values(classpath), openssl=openssl, openssl_arg=_values(openssl_arg), shared_jvm=shared_jvm,
        interleave=interleave)
    comparison = run_comparison(request, resolve_matrix(request), progress, Path(output) if output else None,
                                host_name, name, began)
    frame = comparison.frame
    frame.attrs.update(metadata=comparison.metadata, ratios=[r.as_dict() for r in comparison.ratios],
                       findings={index: note.as_dict() for index, note in comparison.overhead.items()},
                       failures=comparison.failures, output=str(comparison.output))
    return frame


def _values(given: str | Iterable[str]) -> tuple[str, ...]:
    """A repeatable option's values: one given alone, or several."""
    return (given,) if isinstance(given, str) else tuple(given)


def load(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Saved runs as one tidy DataFrame: a row per measurement, the run's metadata as columns.

    Unreadable lines are skipped and listed in ``frame.attrs["problems"]``; a file with nothing
    readable raises ValueError.
    """

    loaded = store.read([paths] if isinstance(paths, (str, Path)) else list(paths))
    frame = tidy_frame(loaded)
    frame.attrs.update(problems=loaded.problems, failures=loaded.failures)
    return frame
