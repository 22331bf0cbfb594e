"""The README and the documentation site (docs/, built by mkdocs; .ci/run builds it strictly):
every example of output is the current version's or says it is an excerpt, no page cites an issue
number, and the CLI reference is generated from the click commands rather than written out."""
from __future__ import annotations

import re

import pytest
from helpers import REPO

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
    assert "::: mkdocs-click" in reference and ":module: jvmbridge.cli" in reference
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
