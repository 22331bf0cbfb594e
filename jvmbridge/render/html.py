"""Self-contained HTML pages (jinja2): styles and figures inline under a policy that loads nothing.
Every value is made printable and autoescaped: text from hosts is shown, never run."""
from __future__ import annotations

import datetime
import functools

from jvmbridge.render.text import printable
from jvmbridge.version import __version__


@functools.cache
def _environment():
    import jinja2
    import markupsafe

    environment = jinja2.Environment(loader=jinja2.PackageLoader("jvmbridge.render", "templates"),
                                     autoescape=True, undefined=jinja2.StrictUndefined)
    # Markup (a figure's SVG, built here) is the page's own; every other string came from the data.
    environment.finalize = lambda value: (printable(value) if isinstance(value, str)
                                          and not isinstance(value, markupsafe.Markup) else value)
    return environment


def page(template: str, title: str, **values) -> str:
    """``template`` filled with ``values``, under ``title``."""
    generated = (f"jvmbridge {__version__}, "
                 f"{datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}")
    return _environment().get_template(template).render(title=title, generated=generated, **values) + "\n"
