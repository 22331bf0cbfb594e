"""The render registry: every format a command offers exists, and none hides outside the table."""
from __future__ import annotations

import importlib

import pytest

from jvmbridge.render import FORMATS, render
from jvmbridge.render.text import markdown


@pytest.mark.fast
@pytest.mark.parametrize("document", FORMATS)
def test_every_listed_format_has_its_renderer_and_no_other_exists(document):
    module = importlib.import_module(f"jvmbridge.render.{document}")
    offered = {name.removeprefix("render_") for name in dir(module) if name.startswith("render_")}
    assert offered == set(FORMATS[document])


@pytest.mark.fast
def test_a_format_a_document_lacks_is_refused():
    with pytest.raises(ValueError, match="check has no html format; it has table, markdown, csv, json"):
        render("check", "html", {})


@pytest.mark.fast
def test_markdown_escapes_pipes_inside_cells():
    assert markdown([["a", "b"], ["x | y", "z"]]) == ["| a | b |", "|---|---|", "| x \\| y | z |"]


@pytest.mark.fast
def test_jdks_in_every_format():
    rows = [{"found_in": "PATH", "java_home": "/jdk", "version": "17.0.15", "vendor": "Debian", "arch": "x86_64",
             "jpype": True, "why_not": None}]
    assert render("jdks", "table", rows).splitlines()[1].split() == ["PATH", "/jdk", "17.0.15", "Debian", "x86_64", "yes"]
    assert render("jdks", "markdown", rows).splitlines()[2] == "| PATH | /jdk | 17.0.15 | Debian | x86_64 | yes |"
    assert render("jdks", "csv", rows).splitlines()[1] == "PATH,/jdk,17.0.15,Debian,x86_64,True,"
    assert '"java_home": "/jdk"' in render("jdks", "json", rows)
