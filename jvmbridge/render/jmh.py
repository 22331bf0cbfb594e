"""jvmbridge's rows in JMH's `-rf json` shape for the tools that read JMH results
(github-action-benchmark, jmh-visualizer): JMH's pooled mean and 99.9% error from the same rounds as
the primary metric, jvmbridge's figure as a secondary one. Names avoid what those tools split on (no
dot inside a `benchmark` part, no space or "=" in `params`); undefined error is "NaN"."""
from __future__ import annotations

import re

import numpy as np

from jvmbridge.engines import jdk_of, name_of
from jvmbridge.results import by_fork, missing, rounds_per_fork
from jvmbridge.version import __version__

PERCENTILES = ("0.0", "50.0", "90.0", "95.0", "99.0", "99.9", "99.99", "99.999", "99.9999", "100.0")
SECONDARY = "·jvmbridge.forkLowerQuartile"  # JMH's secondary metrics are named "·gc.alloc.rate" and so on


def records(frame, round_seconds: float | None, params: dict[str, str] | None = None) -> list[dict]:
    """One JMH result per row of ``frame``, in order; ``params`` beside each row's own."""
    return [_record(row, round_seconds, params or {}) for row in frame.itertuples()]


def _detail(row, name: str) -> str:
    value = getattr(row, name, None)
    return "" if missing(value) else str(value)


def _record(row, round_seconds: float | None, extra: dict[str, str]) -> dict:
    # One count a fork: the rounds asked (the fewest run); spare rounds show in rawData.
    per_fork = min(rounds_per_fork(row.round_fork, row.rounds, row.forks)) if row.forks else row.rounds
    jdk = jdk_of(row)
    home = _detail(row, "java_home")
    return {
        "jmhVersion": f"none (jvmbridge {__version__}, JMH's result format)",
        "benchmark": f"jvmbridge.{_identifier(name_of(row, with_jdk=False))}.{row.shape}",
        "mode": "avgt", "threads": row.threads, "forks": row.forks,
        "jvm": f"{home}/bin/java" if home else "", "jvmArgs": _detail(row, "jvm_options").split(),
        "jdkVersion": jdk or "", "vmName": row.implementation, "vmVersion": "",
        "warmupIterations": 0, "warmupTime": "until steady (jvmbridge's warm-up)", "warmupBatchSize": 1,
        "measurementIterations": per_fork,
        "measurementTime": f"{round_seconds:g} s" if round_seconds and per_fork > 1 else "1 s",
        "measurementBatchSize": 1,
        "params": _params(row, jdk, extra),
        "primaryMetric": _metric(row.jmh_score, _defined(row.jmh_error), row.round_ns_per_op,
                                 by_fork(row.round_fork, row.round_ns_per_op)),
        # Pre-0.3.0 rows have no fork summaries: their figure pooled every round.
        "secondaryMetrics": {SECONDARY: _metric(row.ns_per_op, _defined(row.ns_per_op_error), row.fork_ns_per_op,
                                                [[ns] for ns in row.fork_ns_per_op])} if row.fork_ns_per_op else {},
    }


def _params(row, jdk: str | None, extra: dict[str, str]) -> dict[str, str]:
    """What tells the row apart from the run's others."""
    params = {"setting": row.setting, "cipher": row.cipher, "direction": row.direction,
              "bytes": str(row.message_bytes), **({"jdk": jdk} if jdk else {}), **extra}
    options = " ".join(filter(None, (_detail(row, "jvm_args"), _detail(row, "openssl_args"))))
    if options:  # the user's own options make a configuration of its own
        params["options"] = options
    return {key: _param(value) for key, value in params.items()}


def _defined(value) -> float | None:
    return None if missing(value) else float(value)


def _metric(score: float, error: float | None, samples: list[float], raw: list[list[float]]) -> dict:
    return {"score": score, "scoreError": "NaN" if error is None else error,
            "scoreConfidence": ["NaN", "NaN"] if error is None else [score - error, score + error],
            "scorePercentiles": {p: float(np.percentile(samples, float(p))) for p in PERCENTILES},
            "scoreUnit": "ns/op", "rawData": raw}


def _identifier(name: str) -> str:
    """A class name as JMH's tools split them: "JVM SunJCE" -> "JVM_SunJCE"."""
    return re.sub(r"\W+", "_", name).strip("_") or "engine"


def _param(value: str) -> str:
    """A param value without spaces or "=": "intrinsics on" -> "intrinsics-on"."""
    return re.sub(r"[\s=]+", "-", value.strip())
