"""Fetched web pages saved as Markdown files: untrusted content made inert text.

A page's content (text or HTML, as the user's search function fetched it) becomes plain
text: scripts, styles and other non-content elements are dropped, tags removed, entities
decoded; then nothing in the file can act as HTML (every ``<`` is escaped), images become
links (no remote image loads when the file is viewed), and links to ``javascript:``,
``data:`` or ``vbscript:`` are blocked. Nothing here runs or fetches anything.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import threading
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Protocol


class WebPage(Protocol):
    """A search result with its page (a ``WebResult``; ``search.py`` reads pages with
    this module, so this module names only what it reads of one)."""

    @property
    def url(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def snippet(self) -> str: ...

    @property
    def content(self) -> str | None: ...

_SKIPPED = frozenset({"script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "math",
                      "head", "title", "canvas", "form", "button", "select", "textarea"})
_BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "br", "hr",
                    "li", "ul", "ol", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote",
                    "dd", "dt", "figure", "figcaption"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(")
_BAD_LINK = re.compile(r"\]\(\s*<?\s*(?:javascript|data|vbscript)\s*:", re.IGNORECASE)
_BAD_REFERENCE = re.compile(r"^(\s*\[[^\]]+\]:\s*)(?:javascript|data|vbscript)\s*:", re.IGNORECASE | re.MULTILINE)
_SLUG = re.compile(r"[^a-z0-9]+")
_temp_dir: Path | None = None
_temp_lock = threading.Lock()


class _TextOf(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_to_text(content: str) -> str:
    """Text of ``content`` (HTML or plain text): tags and non-content elements removed,
    entities decoded, control characters and runs of blank lines dropped."""
    parser = _TextOf()
    parser.feed(content or "")
    parser.close()
    text = _CONTROL.sub("", "".join(parser.parts)).replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def inert_markdown(text: str) -> str:
    """Text that renders as text: no HTML, no remote images, no script links."""
    text = text.replace("<", "&lt;")  # entities render as text, so only "<" could open a tag
    text = _IMAGE.sub(r"[image: \1](", text)
    text = _BAD_LINK.sub("](#blocked:", text)
    return _BAD_REFERENCE.sub(r"\1#blocked:", text)


def page_markdown(result: WebPage, query: str = "", when: datetime | None = None) -> str:
    """The saved file: title, source, when and why it was fetched, then the content."""
    title = " ".join(html_to_text(result.title).split()) or result.url
    stamp = (when or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    found = f' by a web search for "{inert_markdown(" ".join(query.split()))}"' if query else ""
    body = html_to_text(result.content or "") or html_to_text(result.snippet)
    return (
        f"# {inert_markdown(title).lstrip('#').strip()}\n\n"
        f"- Source: <{result.url.replace('>', '%3E').replace('<', '%3C')}>\n"
        f"- Retrieved: {stamp}{found}\n\n"
        "> Saved from the web by jupyter-brain: untrusted content, kept as text only.\n\n"
        f"{inert_markdown(body)}\n"
    )


def save_page(result: WebPage, folder: Path, query: str = "") -> Path:
    """Write the page as ``<slug>-<hash of url>.md`` in ``folder``; the same address is
    the same file (the latest fetch wins)."""
    folder.mkdir(parents=True, exist_ok=True)
    slug = _SLUG.sub("-", html_to_text(result.title).lower()).strip("-")[:50] or "page"
    digest = hashlib.sha256(result.url.encode("utf-8")).hexdigest()[:10]
    path = folder / f"{slug}-{digest}.md"
    path.write_text(page_markdown(result, query), encoding="utf-8")
    return path


def pages_folder(artifacts_root: Path | None) -> Path:
    """``<artifacts>/web`` (the session's data folder in a notebook); a private temporary
    folder of this process when the harness keeps artifacts in memory."""
    global _temp_dir
    if artifacts_root is not None:
        return Path(artifacts_root) / "web"
    with _temp_lock:
        if _temp_dir is None:
            _temp_dir = Path(tempfile.mkdtemp(prefix="jupyter_brain_web_"))
        return _temp_dir
