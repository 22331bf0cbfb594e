"""`jvmbridge compare`: exit 1 when a configuration failed, a fork of one failed, one computed wrong
bytes or a fault of jvmbridge's own stopped the forks (whatever finished is still reported), 130
when interrupted (likewise)."""
from __future__ import annotations

import contextlib
import os
import sys
import time

import click

from jvmbridge.cli.common import (
    Count,
    Finite,
    ProviderName,
    Seconds,
    Sizes,
    all_jdks_option,
    classpath_option,
    export_options,
    format_option,
    java_option,
    jvm_arg_option,
    output_option,
    print_document,
    quiet_option,
    say_where_saved,
    terminal_width,
    trust_jvm_arg_option,
    trust_option,
)
from jvmbridge.cli.say import say, say_lines
from jvmbridge.engines import ENGINES, default_engines
from jvmbridge.forks.parent import WorkerError
from jvmbridge.harness import HarnessUnavailable
from jvmbridge.jvm.providers import PROVIDERS
from jvmbridge.render.compare import MAX_NOTE_LINES
from jvmbridge.sampling import policy
from jvmbridge.sampling.workload import (
    AESNITESTER_MESSAGE_BYTES,
    CLIFF_SIZES,
    DIRECTIONS,
    KEY_BITS,
    SHAPES,
    SPEED_SIZES,
    SWEEP_SIZES,
)


@click.command()
@click.option("--iterations", type=Count(), default=None,
              help="The run's work: this many messages of each configuration, shared among its --forks and split "
                   "into their rounds; --forks 1 runs them in one process, as AESNITester's loop "
                   "(1e8, 1_000_000, ...) [default: rounds of --round-time each].")
@click.option("--round-time", type=Seconds(0.01, policy.MAX_ROUND_SECONDS),
              default=policy.ROUND_SECONDS, show_default=True, metavar="SECONDS",
              help="Length of a timed round, sized from the warm-up's speed (openssl speed: whole seconds).")
@click.option("--rounds", type=click.IntRange(1, policy.MAX_ROUNDS), default=None,
              help=f"Timed rounds per fork [default: {policy.ROUNDS}, or the count this host's earlier runs of "
                   "a configuration say reaches --target-error soonest (Kalibera & Jones)].")
@click.option("--threads", type=click.IntRange(1, policy.MAX_THREADS), default=1, show_default=True,
              help="Loops running at once, each with its own cipher: JVM threads, pyca processes, "
                   "openssl speed -multi. Figures are the aggregate, with the per-thread rate beside.")
@click.option("--forks", type=click.IntRange(1, policy.MAX_FORKS), default=None,
              help="Fresh processes per configuration, at least (as JMH's forks); each fork is one sample "
                   "(the lower quartile of its rounds), the interval is over forks "
                   f"[default: {policy.FORKS}, or --max-forks where fewer].")
@click.option("--max-forks", type=click.IntRange(1, policy.MAX_FORKS), default=None,
              help="More forks, up to this many, while an interval is wider than --target-error (the ratios') "
                   f"[default: {policy.FORK_LIMIT}, or --forks where more; with --iterations, --forks: a fixed count].")
@click.option("--target-error", type=Finite(0, 100, min_open=True, max_open=True),
              default=policy.TARGET_ERROR * 100, show_default=True, metavar="PERCENT",
              help="Half-width of the 95% interval over forks, relative to the ratio, that stops adding "
                   "forks.")
@click.option("--total-time", type=Seconds(0, min_open=True), default=None, metavar="SECONDS",
              help="Seconds the whole run aims to take: every configuration runs its first --forks where "
                   f"they fit (at least {policy.FORKS_IN_TIME}), and the time left beyond them is shared out "
                   "as more forks; rows stopped short say so "
                   f"[default: {policy.TOTAL_TIME:g}; none with --forks, --max-forks or --iterations: forks until "
                   "--target-error or --max-forks].")
@click.option("--key-bits", type=click.Choice([str(b) for b in KEY_BITS]), default=None,
              callback=lambda c, p, v: int(v) if v else None,
              help="AES key size of the default cipher, aes-<bits>-cbc [default: 256].")
@click.option("--cipher", multiple=True, metavar="NAME",
              help="openssl-style name: aes-{128,192,256}-{cbc,ctr,gcm,cfb}; repeatable [default: aes-256-cbc].")
@click.option("--sizes", "--message-size", "sizes", type=Sizes(), default=str(AESNITESTER_MESSAGE_BYTES),
              show_default=True, metavar="BYTES[,BYTES...]|sweep|cliffs",
              help="Plaintext bytes per message; several for a sweep; `sweep`: openssl speed's "
                   f"{','.join(map(str, SPEED_SIZES))} and AESNITester's 38; `cliffs`: the sweep and "
                   f"{','.join(str(s) for s in CLIFF_SIZES if s not in SWEEP_SIZES)}, either side of known cliffs. "
                   "Each size gets JVMs of its own (--shared-jvm: one JVM per fork measures them all).")
@click.option("--shape", type=click.Choice(SHAPES), multiple=True,
              help="message: a fresh doFinal per message (AESNITester); stream: update into a buffer "
                   "(openssl speed -evp). Repeat for both, side by side. [default: both; the JVM's messages "
                   "against the C loop's, its stream against openssl speed's where that runs in slices]")
@click.option("--direction", type=click.Choice(DIRECTIONS), multiple=True, default=["encrypt"],
              show_default=True, help="Encrypt, decrypt (the plaintext's ciphertext), or both side by side.")
@java_option
@trust_option
@all_jdks_option
@jvm_arg_option("Extra JVM option for every JVM configuration; repeatable.", name="jvm_arg")
@trust_jvm_arg_option
@click.option("--provider", type=ProviderName(), multiple=True, default=["SunJCE"],
              show_default=True, help=f"JCE provider for the JVM rows: {', '.join(PROVIDERS)} or a provider class "
                                      "name; repeatable. All but SunJCE need --classpath.")
@classpath_option
@click.option("--openssl", default="openssl", show_default=True, metavar="PATH",
              help="The openssl command for the C-loop rows.")
@click.option("--openssl-arg", multiple=True, metavar="ARG",
              help="Passed to `openssl speed` before -evp, one word each: --openssl-arg=-provider --openssl-arg=NAME.")
@click.option("--shared-jvm", is_flag=True,
              help="One JVM per fork measures every size, shape and direction of a setting: start-up and most "
                   "warm-up paid once, but each after the first runs on code the JIT compiled for the others too "
                   "(up to a fifth slower in jvmbridge's benchmarks). Default: JVMs of its own for each, as JMH "
                   "forks per @Param.")
@click.option("--interleave/--no-interleave", default=True, show_default=True,
              help="Measure the JVM and the C loop together: every setting a live process, run in slices of "
                   f"{policy.SLICE_SECONDS * 1000:g} ms, {policy.CYCLES} cycles a fork, in a fresh random order each "
                   "cycle, so every ratio between them pairs slices that ran moments apart (--rounds and "
                   "--round-time then do not apply to them). --no-interleave: each "
                   "engine on its own, its settings' workers in turns, --rounds slices of --round-time a fork (so "
                   "too with --threads above 1, and for loops that run only whole: AESNITester's).")
@click.option("--engine", type=click.Choice(list(ENGINES)), multiple=True, default=default_engines(),
              show_default=True, help="Engines to run; repeatable.")
@output_option("JSON-lines file each result is written to as it finishes "
               "[default: ~/.local/share/jvmbridge/runs/<start>-<host>.jsonl].")
@format_option("compare")
@export_options("compare")
@click.option("--jmh", "jmh_columns", is_flag=True,
              help="Also show JMH's figure for each row: the mean of every round pooled, and its 99.9% error, "
                   "to read beside JMH's own output (always in JSON and CSV as jmh_score, jmh_error).")
@click.option("--wide", is_flag=True,
              help="Every column of the table, however wide; by default a table wider than the terminal leaves "
                   "out the columns least needed (and says which).")
@click.option("-v", "--verbose", is_flag=True,
              help=f"Every note of every row under the table; by default at most {MAX_NOTE_LINES} lines, the loudest "
                   "(wrong bytes, states not as asked, failed forks first). JSON, CSV and the saved run have them all.")
@quiet_option
@click.option("--host-name", metavar="NAME", help="This host's name in the saved run (default: its hostname); "
                                                  "`jvmbridge fleet --compare` passes the inventory's.")
@click.option("--name", metavar="NAME", help="A name for this run, which report's column for it shows (as "
                                             "hyperfine's --command-name; default: \"run N\", by start time).")
def compare(java_paths, output, output_format, exports, jmh_columns, wide, verbose, quiet, host_name, name, **options):
    """JVM AES (intrinsics on/off) against native OpenSSL (AES-NI on/off)."""
    began = time.monotonic()  # --total-time counts the whole command
    from jvmbridge.api import run_comparison

    request, matrix = _request_or_usage_error(java_paths, options)
    from jvmbridge.cli.live import CompareProgress, wanted  # rich, loaded only by the commands that draw

    live = CompareProgress() if wanted(quiet) else None
    try:
        with live or contextlib.nullcontext():
            comparison = run_comparison(request, matrix, live, output, host_name, name, began)
    except (HarnessUnavailable, WorkerError) as e:
        raise click.ClickException(str(e)) from None
    comparison.jmh_columns, comparison.verbose = jmh_columns, verbose
    # No -o here: compare's --output is the JSON-lines file each result went to as it finished.
    exported = print_document("compare", output_format, comparison, None, quiet, exports, terminal_width(wide))
    for configuration, error in comparison.failures:
        say(f"{configuration} failed: {error}")
    fault = _say_fault(comparison.metadata)
    say_where_saved(comparison.save_error, comparison.output, quiet)
    rows_said = _say_rows_not_whole(comparison.results)
    if comparison.interrupted:
        sys.exit(130)
    if comparison.failures or fault or rows_said or comparison.save_error or not exported:
        sys.exit(1)


def _say_fault(metadata: dict) -> bool:
    """On stderr, a fault of jvmbridge's own that stopped the forks (its traceback under
    JVMBRIDGE_DEBUG, as for any bug); True where there was one."""
    if not (fault := metadata.get("fault")):
        return False
    say(f"{fault}; the forks before it are shown and saved")
    if os.environ.get("JVMBRIDGE_DEBUG"):
        say_lines(metadata.get("fault_traceback") or "")
    return True


def _request_or_usage_error(java_paths, options: dict):
    """The request and the matrix it names; what cannot run said, and a usage error where that is
    every engine or the request is bad."""
    from jvmbridge.comparison.request import CompareRequest, resolve_matrix

    try:
        request = CompareRequest(java=java_paths, **options)  # options under their own names
        matrix = resolve_matrix(request)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    from jvmbridge.comparison.runner import left_out

    out = left_out(matrix)
    if out.keys() >= set(matrix.engines):  # nothing would run: bad input, not an empty run
        raise click.UsageError("; ".join(f"engine {key} cannot run: {why}" for key, why in out.items()))
    for key, why in out.items():
        say(f"engine {key} left out: {why}")
    return request, matrix


def _say_rows_not_whole(results: list) -> bool:
    """On stderr, the rows that computed wrong bytes and those where a fork failed; True where there were any."""
    from jvmbridge.results import NoteKind, wrong_bytes

    wrong = [i + 1 for i, result in enumerate(results) if wrong_bytes(result)]
    if wrong:
        say(f"row(s) {', '.join(map(str, wrong))} computed WRONG bytes: their figures are invalid")
    partial = [i + 1 for i, result in enumerate(results)
               if any(note.kind is NoteKind.FORK_FAILED for note in result.notes)]
    if partial:
        say(f"row(s) {', '.join(map(str, partial))}: a fork failed; the finished forks are shown")
    return bool(wrong or partial)
