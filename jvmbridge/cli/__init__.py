"""The `jvmbridge` command line: one module per command.

Exit codes, for every command: 0 ok, 1 a run failed, (check) something is not active or
(verify, check) some JVM computed wrong bytes, 2 bad usage or input (check, verify: could not
tell), 130 interrupted.
"""
import os
import sys
import warnings

import click

from jvmbridge import __version__
from jvmbridge.cli.check import check
from jvmbridge.cli.compare import compare
from jvmbridge.cli.flags import flags
from jvmbridge.cli.fleet import fleet
from jvmbridge.cli.guard import guard
from jvmbridge.cli.jdks import jdks
from jvmbridge.cli.report import report
from jvmbridge.cli.verify import verify
from jvmbridge.render.text import printable


# click 8.2+ raises this for a group called with nothing (8.1 prints the help itself).
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class OneLineErrors(click.Group):
    """Errors as one line on stderr ("jvmbridge: error: ..."), never a usage dump or a traceback."""

    def main(self, *args, **kwargs):
        # A library warning (a JDK left out, ...) is one line too.
        warnings.showwarning = lambda message, *_: click.echo(f"jvmbridge: {printable(str(message))}", err=True)
        try:
            status = super().main(*args, standalone_mode=False, **kwargs)
        except _NO_ARGS_IS_HELP as e:  # plain `jvmbridge`: the help, not an error
            click.echo(e.ctx.get_help() if e.ctx else e.format_message())
            sys.exit(0)
        except click.ClickException as e:
            click.echo(f"jvmbridge: error: {printable(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("jvmbridge: interrupted", err=True)
            sys.exit(130)
        except Exception as e:  # a bug: one line for the user, the traceback on request
            if os.environ.get("JVMBRIDGE_DEBUG"):
                raise
            click.echo(f"jvmbridge: internal error: {type(e).__name__}: {printable(str(e))} "
                       "(set JVMBRIDGE_DEBUG=1 for the traceback, and please report it)", err=True)
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else 0)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="jvmbridge")
def main():
    """Is the JVM using the CPU's AES instructions, and how fast is Java crypto next to OpenSSL?"""


main.add_command(compare)
main.add_command(flags)
main.add_command(check)
main.add_command(verify)
main.add_command(jdks)
main.add_command(report)
main.add_command(fleet)
main.add_command(guard)
