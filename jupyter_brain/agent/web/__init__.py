"""Web search for a turn (``run_turn(web_mode="on")``): the user's search function's
contract and results (``search``), pages kept as inert Markdown (``pages``). The turn's
use of them — the provider's server-side search, else the function as a tool, else a
notice; citations and saved pages — is the web integration (``agent/integrations/web``)."""

from .pages import html_to_text, page_markdown, save_page
from .search import NO_WEB_SEARCH, WEB_TOOL, WebResult, WebSearchFunction, read_results

__all__ = ["NO_WEB_SEARCH", "WEB_TOOL", "WebResult", "WebSearchFunction", "html_to_text", "page_markdown",
           "read_results", "save_page"]
