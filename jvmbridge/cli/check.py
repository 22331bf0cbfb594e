"""`jvmbridge check`: is AES acceleration really on, on this server and in its running JVMs?

Exit codes: 0 everything checked is active, 1 something is not, 2 could not tell.
"""
from __future__ import annotations

import contextlib
import sys
import warnings
from pathlib import Path

import click

from jvmbridge.cli.common import (
    DOCUMENT_AS_JSON,
    Pid,
    Seconds,
    all_jdks_option,
    export_options,
    format_option,
    java_option,
    javas_or_usage_error,
    jvm_arg_option,
    output_option,
    print_document,
    quiet_option,
    terminal_width,
    trust_jvm_arg_option,
    trust_option,
)
from jvmbridge.forks.parent import WorkerError
from jvmbridge.harness import HarnessUnavailable
from jvmbridge.intrinsics.modes import DEFAULT_MODES, MODES
from jvmbridge.jvm.discovery import SkippedJdk
from jvmbridge.jvm.live import NotAJvm, live_jvm

# Shipped beside the package: Prometheus alert rules, a systemd service and timer (docs/monitoring.md).
MONITORING = Path(__file__).resolve().parent.parent / "monitoring"


class CouldNotTell(click.ClickException):
    """An error that leaves the check without a verdict: exit code 2, as the document's own "could not tell"
    (click declares exit_code a class variable, so a subclass sets it, as click's UsageError does)."""
    exit_code = 2


def _print_monitoring(ctx, param, value):
    if value:
        click.echo(MONITORING)
        ctx.exit()


@click.command()
@click.option("--print-monitoring", is_flag=True, is_eager=True, expose_value=False, callback=_print_monitoring,
              help="Print the folder of the Prometheus alert rules and the systemd service and timer, and exit.")
@java_option
@trust_option
@all_jdks_option
@jvm_arg_option("Check the JDKs as they run with this option, e.g. --jvm-arg=-XX:-UseAES; repeatable.")
@trust_jvm_arg_option
@click.option("--mode", "mode_names", type=click.Choice(list(MODES)), multiple=True, default=DEFAULT_MODES,
              show_default=True, help="AES modes to check; repeatable.")
@click.option("--pid", "pids", type=Pid(), multiple=True, help="Also check this running JVM; repeatable.")
@click.option("--all-jvms", is_flag=True, help="Also check every running JVM on this host.")
@click.option("--mode-time", "mode_seconds", type=Seconds(0.5, 600), default=20, show_default=True,
              metavar="SECONDS", help="How long to run each mode before calling its intrinsic not observed.")
@click.option("--scan-time", "scan_seconds", type=Seconds(1, 3600), default=120, show_default=True,
              help="Seconds that reading every running JVM (--pid, --all-jvms) may take in all; the JVMs "
                   "not read by then are reported as not checked.")
@click.option("--verify/--no-verify", default=True, show_default=True,
              help="Run a short `verify` sweep on each active mode: are its bytes right once compiled?")
# The default, per mode: enough for C2 to compile the intrinsic and two passes after it on a 2-core machine.
@click.option("--verify-time", "verify_seconds", type=Seconds(1, 3600), default=10, show_default=True,
              metavar="SECONDS", help="How long each mode's sweep may run (the modes of a JDK share their time).")
@format_option("check")
@export_options("check")
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json (kept for scripts).")
@output_option(DOCUMENT_AS_JSON + " `report` and `fleet` read it.")
@quiet_option
@click.option("--host-name", metavar="NAME", help="This host's name in the document (default: its hostname); "
                                                  "`jvmbridge fleet` passes the inventory's.")
def check(java_paths, trust_jdk_owner, all_jdks, jvm_args, mode_names, pids, all_jvms, mode_seconds, scan_seconds, verify,
          verify_seconds, output_format, exports, as_json, output, quiet, host_name):
    """Verdict per AES mode: CPU features, JVM flags, and JIT evidence of the intrinsics.

    JDKs (--java, default JAVA_HOME or java on PATH) are checked unless only --pid/--all-jvms
    are given.
    """
    from jvmbridge.check.host import check_host
    from jvmbridge.jvm.live import all_live_jvms
    from jvmbridge.verify.plan import quick_sizes
    from jvmbridge.verify.run import Sweep

    _refuse_pids_not_jvms(pids)
    javas, left_out = _jdks_to_check(java_paths, all_jdks, trust_jdk_owner, running_asked=bool(pids or all_jvms))
    modes = [MODES[name] for name in dict.fromkeys(mode_names)]
    quick = Sweep(sizes=tuple(quick_sizes()), budget=verify_seconds * len(modes))
    from jvmbridge.cli.live import StepProgress, wanted  # rich, loaded only by the commands that draw

    live = StepProgress() if wanted(quiet) else None
    try:
        with live or contextlib.nullcontext():
            document = check_host(javas, tuple(jvm_args), modes, list(pids), all_live_jvms() if all_jvms else [],
                                  mode_seconds, live, quick if verify else None, host_name, left_out, scan_seconds)
    except HarnessUnavailable as e:
        raise CouldNotTell(str(e)) from None
    saved = print_document("check", "json" if as_json else output_format, document, output, quiet, exports,
                           terminal_width())
    sys.exit(document["exit_code"] if saved else max(document["exit_code"], 2))  # 2: could not do all it was asked


def _refuse_pids_not_jvms(pids) -> None:
    not_jvms = [str(e) for e in map(_not_a_jvm, dict.fromkeys(pids)) if e]
    if not_jvms:  # bad input, as a path that is not a JVM: one line, before anything runs
        raise click.UsageError("; ".join(not_jvms))


def _jdks_to_check(java_paths, all_jdks: bool, trust_jdk_owner: bool,
                   running_asked: bool) -> tuple[list, list[SkippedJdk]]:
    """The JDKs to check (none where only running JVMs are asked for), and those left out (as
    SkippedJdk warnings: the document says why); other warnings shown as they came."""
    if not (java_paths or all_jdks or not running_asked):
        return [], []
    with warnings.catch_warnings(record=True) as caught:  # a JDK left out goes into the document instead
        warnings.simplefilter("always", SkippedJdk)
        javas = javas_or_usage_error(java_paths, all_jdks, trust_jdk_owner)
    left_out = [w.message for w in caught if isinstance(w.message, SkippedJdk)]
    for other in (w for w in caught if not isinstance(w.message, SkippedJdk)):
        warnings.showwarning(other.message, other.category, other.filename, other.lineno)
    return javas, left_out


def _not_a_jvm(pid: int) -> NotAJvm | None:
    """Why ``pid`` names no JVM at all, if it does not (a JVM that cannot be read is the document's to say)."""
    try:
        live_jvm(pid)
    except NotAJvm as e:
        return e
    except WorkerError:
        pass
    return None
