"""MkDocs hook: the command-line reference written from the click commands, as `--help` prints them.

A page's line `::: jvmbridge-cli-reference` becomes a table of the commands with their whole summaries,
then a section per command holding its `--help` text verbatim in a code block: defaults, ranges and
<placeholders> read exactly as in a terminal, whatever click version renders them (mkdocs-click read
option attributes itself and showed click 8.3's `Sentinel.UNSET`, Python reprs and swallowed <...>).
"""
from __future__ import annotations

import re

import click

from jvmbridge.cli import main  # the commands as installed (editable: as in the work tree)

MARKER = "::: jvmbridge-cli-reference"
PROG = "jvmbridge"
WIDTH = 78  # as click prints in an 80-column terminal, whatever the terminal that builds the site
# Characters Markdown or HTML would act on, written as entities so a summary shows as --help does.
_LITERAL = {char: f"&#{ord(char)};" for char in "&<>*_`|[]\\"}


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, "\n".join(reference(main)))


def reference(group: click.Group) -> list[str]:
    """Markdown: the commands' summaries, then the group's and each command's `--help`."""
    root = click.Context(group, info_name=PROG, terminal_width=WIDTH, **group.context_settings)
    commands = [(name, group.get_command(root, name)) for name in group.list_commands(root)]
    lines = ["| Command | What it does |", "| --- | --- |"]
    lines += [f"| [`{name}`](#{PROG}-{name}) | {literal(summary(command))} |"
              for name, command in commands if command is not None and not command.hidden]
    lines += ["", *_help_section(PROG, root)]
    for name, command in commands:
        if command is not None and not command.hidden:
            context = click.Context(command, info_name=name, parent=root, terminal_width=WIDTH,
                                    **command.context_settings)
            lines += _help_section(f"{PROG} {name}", context)
    return lines


def summary(command: click.Command) -> str:
    """The first paragraph of a command's help, whole (click's own list cuts it at 45 characters)."""
    text = command.help or command.short_help or ""
    return re.sub(r"\s+", " ", text.strip().split("\n\n")[0].replace("\b", "")).strip()


def literal(text: str) -> str:
    return "".join(_LITERAL.get(char, char) for char in text)


def _help_section(title: str, context: click.Context) -> list[str]:
    return [f"## {title}", "", "```text", context.command.get_help(context), "```", ""]
