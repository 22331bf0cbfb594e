"""`jvmbridge guard`: the -javaagent that proves AES right inside a server's own JVM; where its jar
is, and a demonstration in a JVM of its own. Exit 0 every mode verified, 1 one computed WRONG
bytes, 2 one not proven or not applicable (its provider has no such Cipher), or the guard could not
be read."""
from __future__ import annotations

import sys

import click

from jvmbridge.cli.common import (
    Seconds,
    classpath_option,
    java_option,
    javas_or_usage_error,
    jvm_arg_option,
    trust_jvm_arg_option,
    trust_option,
)
from jvmbridge.harness import HarnessUnavailable
from jvmbridge.intrinsics.modes import DEFAULT_MODES, MODES
from jvmbridge.render.text import printable


@click.command()
@click.option("--print-agent-path", is_flag=True,
              help="Print the agent jar's path (for -javaagent:PATH[=OPTIONS] on a server's command line) and exit.")
@java_option
@trust_option
@click.option("--mode", "modes", type=click.Choice(list(MODES)), multiple=True, default=list(DEFAULT_MODES),
              show_default=True, help="Modes the guard proves; repeatable.")
@jvm_arg_option("Extra JVM option for the demonstration; repeatable.", name="jvm_arg")
@trust_jvm_arg_option
@click.option("--provider", metavar="NAME", help="The JCE provider the guard proves: a registered name or a provider "
                                                 "class on the class path [default: the JVM's first choice].")
@classpath_option
@click.option("--wait-time", type=Seconds(5, 3600), default=120, show_default=True, metavar="SECONDS",
              help="How long to wait for the guard's answers.")
def guard(print_agent_path, java_paths, trust_jdk_owner, modes, jvm_arg, provider, classpath, wait_time):
    """Start a JVM with the guard agent and a small AES workload, and print what the guard found.

    On a server: java -javaagent:$(jvmbridge guard --print-agent-path)[=modes=cbc+ctr+gcm,delay=5,budget=10,
    share=0.5,retest=600,onwrong=log|exit,provider=NAME] ...; `jvmbridge check --pid` then reads what it found.
    """
    from jvmbridge.forks.parent import WorkerError
    from jvmbridge.guard.demo import JvmEnded, demonstrate
    from jvmbridge.harness import guard_jar

    try:
        if print_agent_path:
            click.echo(guard_jar())
            return
        java = javas_or_usage_error(java_paths, trust_given=trust_jdk_owner)[0]
        options = f"modes={'+'.join(dict.fromkeys(modes))},delay=1" + (f",provider={provider}" if provider else "")
        shown = demonstrate(java, options, wait_time, tuple(jvm_arg), classpath)
    except JvmEnded as e:
        raise click.ClickException(_with_suspects(str(e), modes, java)) from None
    except (HarnessUnavailable, WorkerError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(printable(f"JVM {java.label} with the guard ({shown.seconds:.0f} s): {' '.join(shown.command)}"))
    _print_states(shown.states, java)
    statuses = {state.status for state in shown.states}
    sys.exit(1 if "WRONG" in statuses else 0 if statuses == {"verified"} else 2)


def _with_suspects(error: str, modes, java) -> str:
    """``error`` (the demonstration's JVM ended), with each known bug this JDK and CPU have in a mode under test."""
    from jvmbridge.host.cpu import cpu_info
    from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC
    from jvmbridge.verify.known_bugs import candidates

    # A buggy stub can corrupt memory as well as bytes (JDK-8292158's crashes 17.0.3 on short CTR
    # updates, seen here): where this JDK and CPU have a known bug in a mode under test, it may be that.
    features = cpu_info()["features"]
    suspects = [bug for mode in dict.fromkeys(modes) for bug in candidates(mode, java.release_version, features)]
    return error + "".join(
        f"; this JDK on this CPU has {bug.describe()}, which may be the cause: {UNLOCK_DIAGNOSTIC} -XX:-{bug.flag} "
        "avoids it" for bug in suspects)


def _print_states(states, java) -> None:
    """A line per mode the guard proved; under a WRONG one, the known bugs it is consistent with."""
    from jvmbridge.host.cpu import cpu_info
    from jvmbridge.jvm.options import UNLOCK_DIAGNOSTIC
    from jvmbridge.verify.known_bugs import candidates

    wrong = any(state.status == "WRONG" for state in states)
    features = cpu_info()["features"] if wrong else None  # read once, and only when needed
    for state in states:
        click.echo(printable(f"  {state.mode:<4} {state.status} {state.detail}".rstrip()))
        for bug in candidates(state.mode.lower(), java.release_version, features) if state.status == "WRONG" else ():
            click.echo(printable(f"       consistent with {bug.describe()}; {UNLOCK_DIAGNOSTIC} -XX:-{bug.flag} avoids it "
                                 "(`jvmbridge verify` finds which switch cures it)"))
