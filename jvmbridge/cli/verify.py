"""`jvmbridge verify`: do the JVM's AES intrinsics compute the same bytes as OpenSSL, once compiled?

Exit codes: 0 every mode right, 1 some JVM computed wrong bytes or crashed, 2 could not run.
"""
from __future__ import annotations

import contextlib
import datetime
import socket
import sys
import uuid

import click

from jvmbridge.cli.common import (
    ProviderName,
    Seconds,
    all_jdks_option,
    classpath_option,
    export_options,
    format_option,
    java_option,
    javas_or_usage_error,
    jvm_arg_option,
    output_option,
    print_document,
    quiet_option,
    say_where_saved,
    terminal_width,
    trust_jvm_arg_option,
    trust_option,
)
from jvmbridge.harness import HarnessUnavailable
from jvmbridge.intrinsics.modes import DEFAULT_MODES, MODES
from jvmbridge.jvm.providers import PROVIDERS
from jvmbridge.jvm.providers import provider as provider_named


@click.command()
@java_option
@trust_option
@all_jdks_option
@click.option("--mode", "mode_names", type=click.Choice(list(MODES)), multiple=True, default=DEFAULT_MODES,
              show_default=True, help="AES modes to verify; repeatable.")
@jvm_arg_option("Verify the JDKs as they run with this option, e.g. --jvm-arg=-XX:UseAVX=2; repeatable.")
@trust_jvm_arg_option
@click.option("--provider", type=ProviderName(), default="SunJCE", show_default=True,
              help=f"The JCE provider to verify: {', '.join(PROVIDERS)} or a provider class name; "
                   "all but SunJCE need --classpath.")
@classpath_option
@click.option("--jdk-time", "jdk_seconds", type=Seconds(1, 3600), default=30, show_default=True,
              metavar="SECONDS",
              help="Time per JDK for the sweeps, shared by its modes; reproducing a divergence comes on top.")
@click.option("--quick", is_flag=True, help="Sizes 0..80 and a few stride edges only (what `check` runs).")
@format_option("verify")
@export_options("verify")
@output_option("JSON-lines file each JDK's result is written to as it finishes "
               "[default: ~/.local/share/jvmbridge/runs/<start>-<host>-verify.jsonl].")
@quiet_option
def verify(java_paths, trust_jdk_owner, all_jdks, mode_names, jvm_args, provider, classpath, jdk_seconds, quick, output_format,
           exports, output, quiet):
    """Differential sweep of the JVM's AES against OpenSSL, after the JIT compiled the intrinsics.

    Every size 0..1040 and the edges of the intrinsics' block strides up to 1 MiB + 5, AES-128/192/256,
    encrypt and decrypt, in eight call patterns. Each divergence is reduced to its smallest case
    and blamed on the intrinsic whose flag, switched off, makes it right.
    """
    from jvmbridge.saved import store
    from jvmbridge.verify.plan import quick_sizes, sweep_sizes
    from jvmbridge.verify.run import Sweep, verify_host
    from jvmbridge.verify.sweep import Target

    targets = [Target(java=java, options=tuple(jvm_args), classpath=classpath,
                      provider_class=provider_named(provider).class_name)
               for java in javas_or_usage_error(java_paths, all_jdks, trust_jdk_owner)]
    started = datetime.datetime.now(datetime.timezone.utc)
    writer = store.ResultWriter(output, uuid.uuid4().hex[:12], started, f"{socket.gethostname()}-verify")
    sweep = Sweep(sizes=tuple(quick_sizes() if quick else sweep_sizes()), budget=jdk_seconds)
    modes = [MODES[name] for name in dict.fromkeys(mode_names)]
    from jvmbridge.cli.live import StepProgress, wanted  # rich, loaded only by the commands that draw

    live = StepProgress(len(targets) * len(modes)) if wanted(quiet) else None
    try:
        with live or contextlib.nullcontext():
            document = verify_host(targets, modes, sweep, live,
                                   on_jdk=lambda part: writer.write("verification", jdk=part))
        writer.write("verification_end", document={k: v for k, v in document.items() if k != "jdks"})
    except HarnessUnavailable as e:
        raise click.ClickException(str(e)) from None
    finally:
        writer.close()
    # No -o here: verify's --output is the JSON-lines file each JDK's part went to as it finished.
    exported = print_document("verify", output_format, document, None, quiet, exports, terminal_width())
    say_where_saved(writer.error, writer.path, quiet)
    sys.exit(document["exit_code"] if exported else max(document["exit_code"], 2))  # 2: could not do all it was asked
