"""MkDocs hook: no 404 page where the site does not know its address.

An error page is served for a missing page at any depth, so MkDocs links it from the site's root
(`site_url`'s path, else `/`): without `site_url` every link of it breaks under a sub-path or from
`file://`. A server's own 404 page beats one whose links all go nowhere. Whoever publishes the site
sets its address (JVMBRIDGE_SITE_URL, read by mkdocs.yml) and gets MkDocs's page, linked right.
"""
from __future__ import annotations

from pathlib import Path


def on_post_build(config) -> None:
    if not config.site_url:
        (Path(config.site_dir) / "404.html").unlink(missing_ok=True)
