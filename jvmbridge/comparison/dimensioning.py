"""Rounds per fork from this host's earlier runs: Kalibera & Jones' dimensioning (ISMM 2013).

A row's variance is (s_b^2 + w^2 / r) / n; with the costs of a fork and a round, r is the count
reaching the target soonest. Every fork of a row runs one r (Stein assumes one variance); without
MIN_RUNS earlier runs, or where no r reaches the target, --rounds' default stays."""
from __future__ import annotations

import math
import socket
import statistics
from dataclasses import dataclass, replace

import numpy

from jvmbridge.engines import Job, Part
from jvmbridge.results import by_fork, rounds_per_fork
from jvmbridge.sampling.policy import Sampling
from jvmbridge.saved import store
from jvmbridge.stats.steady import STEADY_ROUNDS
from jvmbridge.stats.summary import CONFIDENCE, t_quantile

# A fork may lose a round to warm-up and keep STEADY_ROUNDS (jvmbridge.stats.steady).
ROUNDS_FLOOR = STEADY_ROUNDS + 1
ROUNDS_CEILING = 3 * Sampling.rounds
# One run's components swing (docs/decisions/0001-the-fork-is-the-unit.md).
MIN_RUNS = 2
MAX_RUNS = 5  # the latest ones: the machine's noise drifts over hours
RECENT_FILES = 50  # result files read, newest first: a bound on the start-up cost
BOOTSTRAP = 400  # resamples of each fork's rounds for w^2


@dataclass(frozen=True)
class Components:
    """One configuration's variance components (share^2 of the figure) and costs (s), pooled."""
    within: float  # w^2: what one round leaves in a fork's summary, times its rounds
    between: float  # s_b^2: the variance of fork summaries no number of rounds removes
    fork_seconds: float  # c_fork: a fork's cost beyond its rounds
    round_seconds: float  # c_round
    runs: int

    def forks_and_seconds(self, rounds: int, sampling: Sampling) -> tuple[int, float]:
        """The forks of ``rounds`` rounds whose Stein interval reaches the target, and their seconds."""
        t = t_quantile(0.5 + CONFIDENCE / 2, sampling.first_stage - 1)
        forks = max(sampling.first_stage,
                    math.ceil((self.between + self.within / rounds) * (t / sampling.target_error) ** 2))
        return forks, forks * (self.fork_seconds + rounds * self.round_seconds)

    def best_rounds(self, sampling: Sampling) -> int | None:
        """The rounds per fork reaching the target soonest (fewer on a tie); None where none can."""
        if sampling.first_stage < 2:
            return None
        costs = {rounds: self.forks_and_seconds(rounds, sampling) for rounds in range(ROUNDS_FLOOR, ROUNDS_CEILING + 1)}
        reaching = [rounds for rounds, (forks, _) in costs.items() if forks <= sampling.fork_limit]
        return min(reaching, key=lambda rounds: (costs[rounds][1], rounds)) if reaching else None

    def said(self, rounds: int) -> str:
        return (f"{rounds} rounds per fork, chosen from {self.runs} earlier runs of it here (Kalibera & Jones): "
                f"forks differed by {math.sqrt(self.between):.1%}, one round moved a fork's figure by "
                f"{math.sqrt(self.within):.1%}, a fork cost {self.fork_seconds:.1f} s beyond its rounds of "
                f"{self.round_seconds:.2g} s")


def choose_rounds(jobs: list[Job], host: str | None = None) -> None:
    """Set each part's rounds per fork from ``host``'s earlier runs where --rounds was not given."""
    wanting = [part for job in jobs for part in job.parts if part.workload.sampling.rounds_from_history]
    if not wanting:
        return
    earlier = earlier_rows(host or socket.gethostname())
    for part in wanting:
        _rounds_from(earlier, part)


def _rounds_from(earlier: list[dict], part: Part) -> None:
    """Set ``part``'s rounds from the ``earlier`` rows where they pick another count; say why."""
    sampling = part.workload.sampling
    found = components([row for row in earlier if row["key"] == key_of(part)][:MAX_RUNS])
    rounds = found.best_rounds(sampling) if found else None
    if found and rounds is not None and rounds != sampling.rounds:
        part.workload = replace(part.workload, sampling=replace(sampling, rounds=rounds))
        part.rounds_basis = found.said(rounds)


def key_of(part: Part) -> tuple:
    """What makes an earlier row a run of the same configuration as ``part``."""
    op, sampling = part.workload.operation, part.workload.sampling
    return _key(part.name, op.cipher_name, op.direction, op.message_bytes, op.shape, sampling.threads,
                sampling.round_seconds)


def _key(job: str, cipher: str, direction: str, message_bytes: int, shape: str, threads: int,
         round_seconds: float | None) -> tuple:
    """The one shape of key_of's key, for a part about to run and for a saved row alike."""
    return job, cipher, direction, message_bytes, shape, threads, round_seconds


def earlier_rows(host: str) -> list[dict]:
    """Rows with timed rounds from ``host``'s latest result files, newest first, each with its key."""
    files = sorted((store.data_dir() / "runs").glob("*.jsonl"), reverse=True)[:RECENT_FILES]
    rows = []
    for path in files:
        try:
            loaded = store.read([path])
        except store.ResultFileError:
            continue  # a file report would refuse tells nothing here either
        for row in reversed(loaded.rows):
            run = loaded.runs.get(row["run_id"], {})
            workload = run.get("workload") or {}
            if run.get("host") == host and workload.get("iterations") is None and "job" in row:
                rows.append({**row, "key": _key(row["job"], row["cipher"], row["direction"], row["message_bytes"],
                                                row["shape"], row["threads"], workload.get("round_seconds"))})
    return rows


def components(rows: list[dict]) -> Components | None:
    """Components pooled over one configuration's ``rows``; None with fewer than MIN_RUNS usable."""
    each = [found for found in map(row_components, rows) if found]
    if len(each) < MIN_RUNS:
        return None

    def pooled(name: str) -> float:
        return statistics.fmean(getattr(found, name) for found in each)

    return Components(within=pooled("within"), between=pooled("between"), fork_seconds=pooled("fork_seconds"),
                      round_seconds=pooled("round_seconds"), runs=len(each))


def row_components(row: dict) -> Components | None:
    """One saved row's components; None under two forks of two rounds or without fork wall times."""
    per_fork = rounds_per_fork(row["round_fork"], row["rounds"], row["forks"])
    seconds = [s for s in row.get("fork_seconds") or [] if s > 0]
    if min(per_fork) < 2 or len(row["fork_ns_per_op"]) < 2 or len(seconds) < 2:
        return None
    figure = row["ns_per_op"]
    forks = _relative_rounds(row)
    within = within_variance(forks)
    left_in_summaries = within * statistics.fmean(1 / len(fork) for fork in forks if fork)
    between = max(0.0, statistics.variance([ns / figure for ns in row["fork_ns_per_op"]]) - left_in_summaries)
    round_seconds = _round_seconds(row)
    return Components(within=within, between=between,
                      fork_seconds=max(0.0, statistics.fmean(seconds) - statistics.fmean(per_fork) * round_seconds),
                      round_seconds=round_seconds, runs=1)


def _relative_rounds(row: dict) -> list[list[float]]:
    """Each fork's undisturbed rounds in a saved row, each over the row's figure."""
    # Relative: variances in (share of the figure)^2.
    return [[ns / row["ns_per_op"] for ns, aside in fork if not aside]
            for fork in by_fork(row["round_fork"], zip(row["round_ns_per_op"], row["round_set_aside"]))]


def _round_seconds(row: dict) -> float:
    """How long a saved row's rounds took on average, in seconds."""
    return statistics.fmean(ns * n for ns, n in zip(row["round_ns_per_op"], row["round_iterations"])) / 1e9


def within_variance(forks: list[list[float]]) -> float:
    """w^2 from the data, not a noise model: each fork's rounds resampled, averaged over forks."""

    draw = numpy.random.default_rng(0)
    per_fork = [float(numpy.quantile(draw.choice(rounds, (BOOTSTRAP, len(rounds))), 0.25, axis=1).var(ddof=1))
                * len(rounds) for rounds in forks if len(rounds) > 1]
    return statistics.fmean(per_fork) if per_fork else 0.0
