"""mkdocs hook: the generated reference pages, and the files the site shows from where they live.

- Each ``<!-- reference: … -->`` marker in a page becomes what ``jupyter_brain.notebook.reference``
  writes from the code (flags, settings, subcommands, API); a marker nothing generates fails
  the build, as does a page that lost its marker.
- The example notebooks (``notebooks/*.ipynb``, rendered from their saved outputs by
  mkdocs-jupyter, which is why this runs before it) and ``ARCHITECTURE.md`` are added as
  pages without being copied into ``docs/``.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"<!-- reference: [a-z ]+ -->")


@event_priority(100)  # before mkdocs-jupyter's on_files turns .ipynb files into pages
def on_files(files, config):
    def from_root(path: str) -> File:  # a file of the repository, its URL its path there
        return File(path, src_dir=str(ROOT), dest_dir=config["site_dir"], use_directory_urls=config["use_directory_urls"])

    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(from_root(f"notebooks/{notebook.name}"))
    files.append(from_root("ARCHITECTURE.md"))
    return files


def on_page_markdown(markdown, page, config, files):
    from jupyter_brain.notebook.reference import pages

    generated = pages()
    for marker in MARKER.findall(markdown):
        if marker not in generated:
            raise PluginError(f"{page.file.src_uri}: nothing generates {marker}")
        markdown = markdown.replace(marker, generated[marker])
    return markdown
