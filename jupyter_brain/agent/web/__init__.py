"""Web search for a turn (``run_turn(web_mode="on")``): the provider's server-side search,
else the user's search function as a tool, else a notice; citations and saved pages."""

from .pages import html_to_text, page_markdown, save_page
from .search import WebResult, WebSearchFunction, read_results
from .turn_web import NO_WEB_SEARCH, WEB_TOOL, TurnWeb

__all__ = ["NO_WEB_SEARCH", "WEB_TOOL", "TurnWeb", "WebResult", "WebSearchFunction", "html_to_text",
           "page_markdown", "read_results", "save_page"]
