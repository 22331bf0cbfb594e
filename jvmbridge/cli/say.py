"""The one way a command speaks to people on stderr: "jvmbridge: " and the text, escaped, since it
may quote a host, a process, a JVM or a saved file (render.text.printable)."""
from __future__ import annotations

import click

from jvmbridge.render.text import printable


def say(text: str) -> None:
    """One line on stderr, every control character in ``text`` written as an escape."""
    click.echo(printable(f"jvmbridge: {text}"), err=True)


def say_lines(text: str) -> None:
    """Lines on stderr as they are (a traceback), their control characters but newlines escaped."""
    click.echo(printable(text, lines=True), err=True, nl=False)
