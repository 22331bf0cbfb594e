"""The `jvmbridge` command line: one module per command.

Exit codes, for every command: 0 ok, 1 a run failed, (check) something is not active or
(verify, check) some JVM computed wrong bytes, 2 bad usage or input (check, verify: could not
tell), 74 the output could not be written to stdout (a full disk, a pipe closed early), 130
interrupted.
"""
import contextlib
import errno
import importlib
import os
import sys
import warnings
from collections.abc import Iterator, MutableMapping, Sequence

import click

from jvmbridge.cli.say import say
from jvmbridge.harness import HarnessUnavailable
from jvmbridge.trust.launch import settle_scratch_folder
from jvmbridge.version import __version__

# click 8.2+ raises this for a group called with nothing (8.1 prints the help itself).
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class OneLineErrors(click.Group):
    """Errors as one line on stderr ("jvmbridge: error: ..."), never a usage dump or a traceback."""

    def main(self, *args, **kwargs):
        settle_scratch_folder()  # before anything is made: root's own scratch folders in no user's $TMPDIR
        # A library warning (a JDK left out, ...) is one line too.
        warnings.showwarning = lambda message, *_: say(str(message))
        stdout, sys.stdout = sys.stdout, _Stdout(sys.stdout)
        try:
            try:
                status = self._status(*args, **kwargs)
            except SystemExit as e:  # a command's sys.exit(exit code)
                status = e.code
            sys.stdout.flush()  # what was printed must reach stdout, or the exit code says it did not
        except OutputFailed as e:
            status = _output_failed(e)
        finally:
            sys.stdout = stdout
        sys.exit(status)

    def _status(self, args: Sequence[str] | None = None, prog_name: str | None = None) -> int | str | None:
        """The command run: its exit code, an error said in one line."""
        try:
            status = super().main(args, prog_name, standalone_mode=False)
        except _NO_ARGS_IS_HELP as e:  # plain `jvmbridge`: the help, not an error
            click.echo(e.ctx.get_help() if e.ctx else e.format_message())
            return 0
        except click.ClickException as e:
            say(f"error: {e.format_message()}")
            return e.exit_code
        except click.Abort:
            say("interrupted")
            return 130
        except OutputFailed:
            raise
        except HarnessUnavailable as e:  # a JVM cannot be started here as it must be (harness, crash folder)
            say(f"error: {e}")
            return 2
        except Exception as e:  # a bug: one line for the user, the traceback on request
            if os.environ.get("JVMBRIDGE_DEBUG"):
                raise
            say(f"internal error: {type(e).__name__}: {e} (set JVMBRIDGE_DEBUG=1 for the traceback, and please report it)")
            return 1
        return status if isinstance(status, int) else 0


# The exit code when stdout could not take the output (a full disk, a pipe closed early): sysexits'
# EX_IOERR, apart from every code a command gives (check's 1 is "not active").
OUTPUT_FAILED = 74


class OutputFailed(Exception):
    """stdout refused what a command printed to it (its OSError inside): not a bug, not bad input."""


class _Stdout:
    """sys.stdout, whose write or flush failing is an OutputFailed, told apart from any other OSError."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as e:
            raise OutputFailed(e) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            raise OutputFailed(e) from None

    def __getattr__(self, name: str):  # isatty, fileno, encoding ...: the stream's own
        return getattr(self._stream, name)


def _output_failed(failure: OutputFailed) -> int:
    """``failure`` said in one line (unless the reader closed the pipe); OUTPUT_FAILED."""
    error = failure.args[0]
    if error.errno != errno.EPIPE:  # a reader that stopped early (`| head`) has what it wanted: no word
        say(f"error: the output could not be written to stdout: {error.strerror or error}")
    # What stdout still holds goes nowhere: Python's own flush at exit would fail again (exit 120).
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return OUTPUT_FAILED


class _Commands(MutableMapping[str, click.Command]):
    """The commands by name, each one's module (jvmbridge.cli.NAME) imported when it is first asked for:
    `check` on a server need not import pandas and the comparison, as compare's module does (half a second)."""

    def __init__(self, names: Sequence[str]):
        self._names, self._loaded = list(names), dict[str, click.Command]()

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            if name not in self._names:
                raise KeyError(name)
            self._loaded[name] = getattr(importlib.import_module(f"jvmbridge.cli.{name}"), name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        if name not in self._names:
            self._names.append(name)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._names.remove(name)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]},
             commands=_Commands(["compare", "flags", "check", "verify", "jdks", "report", "fleet", "guard"]))
@click.version_option(version=__version__, prog_name="jvmbridge")
def main():
    """Is the JVM using the CPU's AES instructions, and how fast is Java crypto next to OpenSSL?"""
