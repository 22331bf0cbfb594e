"""The README and the documentation site (docs/, built by mkdocs; .ci/run builds it strictly):
every example of output is the current version's or says it is an excerpt, no page cites an issue
number, and the CLI reference is generated from the click commands rather than written out."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import click
import pytest
from helpers import REPO, run_cli_here

from jvmbridge.cli import main
from jvmbridge.version import __version__

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# Pages of the site that are the repository's own files, included whole (pymdownx.snippets).
INCLUDED = [REPO / "benchmarks" / "README.md", REPO / "CHANGELOG.md"]
FENCE = re.compile(r"^(```+)(\S*)")


def _fences(text: str):
    """(line number, language, the first line of the paragraph above) of each fenced block's opening."""
    lines = text.splitlines()
    inside = None
    for number, line in enumerate(lines):
        match = FENCE.match(line)
        if not match:
            continue
        if inside is None:
            inside = match.group(1)
            before = lines[:number]
            while before and not before[-1].strip():
                before.pop()
            paragraph = []
            while before and before[-1].strip():
                paragraph.insert(0, before.pop())
            above = paragraph[0] if paragraph else ""
            yield number + 1, match.group(2), above
        elif match.group(1) == inside and not match.group(2):
            inside = None


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_output_is_this_versions_or_an_excerpt(page):
    # Every block says what it is: output (text), what a reader types (sh, python), a tree or a diagram.
    # Output is marked, in the line above it, as this version's or as an excerpt of the kind of output.
    for line, language, above in _fences(page.read_text()):
        where = f"{page.relative_to(REPO)}:{line}"
        assert language in {"text", "sh", "python", "tree", "mermaid"}, f"{where}: a fence without its kind"
        if language == "text":
            assert (above.startswith(f"*Output of jvmbridge {__version__}")
                    or above.startswith("*Excerpt of the kind of")), \
                f"{where}: output neither this version's (*Output of jvmbridge {__version__}...) nor an excerpt"


@pytest.mark.parametrize("page", PAGES + INCLUDED, ids=lambda page: str(page.relative_to(REPO)))
def test_no_page_cites_an_issue_number(page):
    # A reader of the repository cannot open the tracker those numbers are in.
    cited = re.findall(r"\b[Ii]ssues? \d+|\B#\d+\b", page.read_text())
    assert not cited, f"{page.relative_to(REPO)} cites {cited}"


def test_the_cli_reference_is_generated_from_the_commands():
    reference = (REPO / "docs" / "reference" / "cli.md").read_text()
    assert "::: jvmbridge-cli-reference" in reference
    assert "--round-time" not in reference  # written once, in the code


def test_the_readme_is_short_and_links_to_a_page_per_command():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for command in ("compare", "flags", "verify", "check", "guard", "fleet", "jdks", "report"):
        assert f"docs/guide/{command}.md" in readme, command
        assert (REPO / "docs" / "guide" / f"{command}.md").is_file()


def test_every_page_is_in_the_nav():
    config = (REPO / "mkdocs.yml").read_text()
    for page in (REPO / "docs").rglob("*.md"):
        assert str(page.relative_to(REPO / "docs")) in config, page


class _Sections(HTMLParser):
    """The built CLI reference's text: the whole page's, and each h2 section's code blocks'."""

    def __init__(self):
        super().__init__()
        self.text: list[str] = []
        self.blocks: dict[str, list[str]] = {}
        self._section = ""
        self._in = {"h2": 0, "pre": 0, "script": 0}

    def handle_starttag(self, tag, attrs):
        if tag in self._in:
            self._in[tag] += 1
        if tag == "h2":
            self._section = ""
        elif tag == "pre" and self._section:
            self.blocks[self._section].append("")

    def handle_endtag(self, tag):
        if tag in self._in:
            self._in[tag] -= 1

    def handle_data(self, data):
        if self._in["script"]:
            return
        self.text.append(data)
        if self._in["h2"]:
            self._section = (self._section + data).replace("¶", "").strip()
            self.blocks.setdefault(self._section, [])
        elif self._in["pre"] and self._section:
            self.blocks[self._section][-1] += data


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as .ci/run builds it (without JVMBRIDGE_SITE_URL, as a clone builds it)."""
    pytest.importorskip("mkdocs", reason="the docs build needs mkdocs: pip install '.[docs]'")
    site = tmp_path_factory.mktemp("site")
    environment = {name: value for name, value in os.environ.items() if name != "JVMBRIDGE_SITE_URL"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                           cwd=REPO, capture_output=True, text=True, env={**environment, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stderr[-2000:]
    return site


@pytest.fixture(scope="module")
def cli_reference(site) -> _Sections:
    page = _Sections()
    page.feed((site / "reference" / "cli.html").read_text())
    return page


def test_every_built_page_links_relatively(site):
    # Read from file:// or served under a sub-path, a link from the server's root goes nowhere.
    for page in site.rglob("*.html"):
        rooted = re.findall(r'(?:href|src)="/[^/"][^"]*"', page.read_text())
        assert not rooted, f"{page.relative_to(site)} links {rooted[:3]}"
    assert (site / "reference" / "cli.html").is_file()  # page.html: a folder's index is not opened from file://


def _help(*command: str) -> str:
    """`jvmbridge COMMAND --help` as it prints in an 80-column terminal."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "80")
        printed = run_cli_here(*command, "--help")
    assert printed.returncode == 0, printed.stderr
    return printed.stdout


COMMANDS = [(), *[(name,) for name in main.list_commands(click.Context(main))]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(("jvmbridge", *command)))
def test_the_cli_reference_shows_each_commands_help_as_it_prints(cli_reference, command):
    # Every option with its default, range and <placeholders> as --help shows them, not as the
    # generator's own reading of click's attributes (Sentinel.UNSET, ('cbc', 'ctr'), None).
    printed = _help(*command)
    blocks = cli_reference.blocks.get(" ".join(("jvmbridge", *command)), [])
    assert printed.rstrip() in [block.rstrip() for block in blocks], f"{command}: not as --help prints it"
    for placeholder in re.findall(r"<[^<>\s]+>", printed):
        assert placeholder in "".join(cli_reference.text), placeholder


def test_the_cli_reference_shows_each_commands_whole_summary(cli_reference):
    text = re.sub(r"\s+", " ", "".join(cli_reference.text))
    for (name,) in COMMANDS[1:]:
        first_paragraph = _help(name).split("\n\n")[1]  # after the usage line
        assert re.sub(r"\s+", " ", first_paragraph).strip() in text, name


def test_the_cli_reference_shows_no_python_values(cli_reference):
    text = "".join(cli_reference.text)
    for python in ("Sentinel", "UNSET", "('", "['", "None\n", "True\n", "False\n"):
        assert python not in text, python
