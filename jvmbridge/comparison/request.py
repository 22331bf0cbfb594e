"""One `compare` request, from the command line or Python, validated once (a one-line ValueError)."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from jvmbridge.engines import ENGINES, Matrix, default_engines
from jvmbridge.forks.parent import WorkerError
from jvmbridge.jvm.discovery import find_javas
from jvmbridge.jvm.flagsource import flags_and_warnings
from jvmbridge.jvm.options import classpath_entries
from jvmbridge.jvm.providers import provider
from jvmbridge.sampling import policy
from jvmbridge.sampling.policy import Sampling
from jvmbridge.sampling.workload import (
    AESNITESTER_MESSAGE_BYTES,
    SHAPES,
    Operation,
    Workload,
    combinations,
    parse_cipher,
    parse_sizes,
)
from jvmbridge.trust.paths import NotTrusted, trusted_path


@dataclass(frozen=True)
class CompareRequest:
    """Fields named as `compare`'s options (singular for repeatable ones): one vocabulary for CLI and API."""
    # Sampling (sampling.policy.Sampling): None times rounds of round_time s; a count runs exactly that.
    iterations: int | None = Sampling.iterations
    round_time: float = Sampling.round_seconds
    rounds: int | None = None  # None: Sampling.rounds, or as this host's earlier runs of each configuration say
    threads: int = Sampling.threads
    forks: int | None = None  # None: Sampling.forks, or max_forks where that is fewer
    max_forks: int | None = Sampling.max_forks
    target_error: float = Sampling.target_error * 100  # percent, as --target-error: 2 is ±2%
    total_time: float | None = None  # seconds the whole run aims for (runner.run); None: time_limit's default
    cipher: tuple[str, ...] = ()
    key_bits: int | None = None
    sizes: tuple[int, ...] | int | str = (AESNITESTER_MESSAGE_BYTES,)  # bytes, a list, "16,64" or "sweep"
    # None named: both, each native engine running those it is the reference for.
    shape: tuple[str, ...] = ()
    direction: tuple[str, ...] = (Operation.direction,)
    engine: tuple[str, ...] = default_engines()
    java: tuple[str, ...] = ()  # java binaries or JAVA_HOMEs; none: the default JVM
    all_jdks: bool = False
    trust_jdk_owner: bool = False  # run as root the --java JDKs even where another user can change them
    jvm_arg: tuple[str, ...] = ()
    provider: tuple[str, ...] = ("SunJCE",)
    classpath: tuple[str, ...] = ()  # jars, or PATH-separated lists of them
    openssl: str | None = "openssl"
    openssl_arg: tuple[str, ...] = ()
    shared_jvm: bool = False  # one JVM per fork measuring every workload, rather than a JVM for each
    interleave: bool = True  # the engines that run slices measured together by the conductor (Matrix.interleaved)
    workloads: tuple[Workload, ...] = field(init=False)  # what to measure, from the values above

    def __post_init__(self):
        if self.total_time is not None and not self.total_time > 0:
            raise ValueError(f"time limit must be above 0 s, not {self.total_time:g}")
        if self.key_bits and self.cipher:
            raise ValueError("--key-bits sets the default cipher's key; with --cipher, name the key size there")
        object.__setattr__(self, "workloads", self._workloads())
        unknown = [name for name in self.engine if name not in ENGINES]
        if unknown:
            raise ValueError(f"unknown engine {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
        for name in self.provider:
            provider(name)  # a ValueError names the choices
        if not self.runs_jvms:
            self._refuse_jvm_options()

    @property
    def time_limit(self) -> float | None:
        """Seconds the run aims for: --total-time, else TOTAL_TIME where the rule picks; None: none."""
        if self.total_time is not None:
            return self.total_time
        chosen = self.forks is not None or self.max_forks is not None or self.iterations is not None
        return None if chosen else policy.TOTAL_TIME

    @property
    def runs_jvms(self) -> bool:
        """Whether an engine asked for runs on JVMs (needing JDKs and the JVM options)."""
        return any(ENGINES[key].runs_on_jvms for key in self.engine)

    def _workloads(self) -> tuple[Workload, ...]:
        ciphers = [parse_cipher(name) for name in dict.fromkeys(self.cipher)] or [(self.key_bits or 256, "cbc")]
        sizes = parse_sizes(self.sizes) if isinstance(self.sizes, str) else (
            [self.sizes] if isinstance(self.sizes, int) else list(self.sizes))
        return tuple(combinations(ciphers, self.direction, sizes, self.shape or SHAPES, self._sampling()))

    def _sampling(self) -> Sampling:
        forks = self.forks or min(Sampling.forks, self.max_forks or Sampling.forks)
        # A fixed iteration count fixes the work: rounds split it, they are no sample size.
        from_history = self.rounds is None and self.iterations is None
        return Sampling(iterations=self.iterations, rounds=self.rounds or Sampling.rounds, forks=forks,
                        max_forks=self.max_forks, target_error=self.target_error / 100, round_seconds=self.round_time,
                        threads=self.threads, rounds_from_history=from_history)

    def _refuse_jvm_options(self) -> None:
        """A ValueError naming JVM options given without a JVM engine: they would be ignored in silence."""
        given = [option for option, value in (("--java", self.java), ("--all-jdks", self.all_jdks),
                                              ("--jvm-arg", self.jvm_arg), ("--classpath", self.classpath)) if value]
        if given:
            on_jvms = [key for key, engine in ENGINES.items() if engine.runs_on_jvms]
            raise ValueError(f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} for the engines that "
                             f"run a JVM ({', '.join(on_jvms)}); none of those asked for "
                             f"({', '.join(dict.fromkeys(self.engine))}) does")


def resolve_matrix(request: CompareRequest) -> Matrix:
    """The engines, JVMs and tools ``request`` runs as found here; each JDK run once with --jvm-arg,
    a one-line ValueError for any it cannot use."""
    javas = find_javas(request.java, request.all_jdks, request.trust_jdk_owner) if request.runs_jvms else []
    for java in javas if request.jvm_arg else ():
        # A tenth of a second each: refused before minutes of other work, in java's words.
        try:
            flags_and_warnings(java, request.jvm_arg)
        except WorkerError as e:
            raise ValueError(str(e)) from None
    return Matrix(javas=tuple(javas), jvm_options=tuple(request.jvm_arg), providers=tuple(request.provider),
                  classpath=classpath_entries(request.classpath), engines=tuple(request.engine),
                  openssl=_trusted_command(request.openssl, "--openssl") if request.openssl else None,
                  openssl_args=tuple(request.openssl_arg), shared_jvm=request.shared_jvm,
                  interleaved=request.interleave, shapes_named=bool(request.shape))


def _trusted_command(name: str, what: str) -> str:
    """The real path of command ``name``, used from here on; as root, refused if others can change it."""
    found = shutil.which(name)
    try:
        return str(trusted_path(found, what)) if found else name
    except NotTrusted as e:
        raise ValueError(f"{e}; copy it where only root can change it") from None
