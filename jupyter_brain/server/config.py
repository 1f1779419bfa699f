"""``JupyterBrainMCP``: the endpoint's settings, read by traitlets like any Jupyter setting.

``c.JupyterBrainMCP.permission = "auto"`` in ``jupyter_server_config.py``, or
``--JupyterBrainMCP.permission=auto`` on the command line.
"""

from __future__ import annotations

from traitlets import Bool, CaselessStrEnum, Float, Int
from traitlets.config import Configurable

PERMISSIONS = ("read-only", "ask", "auto")


class JupyterBrainMCP(Configurable):
    """What an outside agent may do in this server's notebooks, and how much."""

    enabled = Bool(True, help="Serve the MCP endpoint at {base_url}jupyter-brain/mcp.").tag(config=True)
    permission = CaselessStrEnum(
        PERMISSIONS, default_value="ask",
        help="read-only: reading only; ask: each edit or execution waits for Approve or Deny on a card in "
             "JupyterLab (refused at once when no JupyterLab with the extension is attached); auto: edits and "
             "executions are allowed.",
    ).tag(config=True)
    approval_timeout = Float(
        120.0, help="Seconds an ask-mode call waits for the user's Approve or Deny before it is refused."
    ).tag(config=True)
    max_executions_per_session = Int(
        200, help="Executions (execute_cell, execute_code, variable look-ups) one MCP session may make; 0: no limit."
    ).tag(config=True)
    max_call_seconds = Float(
        300.0, help="The longest an execution may run, whatever timeout the agent asks for."
    ).tag(config=True)
    default_timeout_seconds = Float(60.0, help="An execution's timeout when the agent names none.").tag(config=True)
    max_result_bytes = Int(
        200_000, help="Bytes a tool result may return (text and images together); the rest is cut with a note."
    ).tag(config=True)
    max_output_chars = Int(
        800, help="Characters of one cell output that read_notebook shows; the rest is cut with a note "
                  "(read_cell shows more)."
    ).tag(config=True)
    max_cell_output_chars = Int(
        6_000, help="Characters of one output that read_cell (by default) and the execute tools return."
    ).tag(config=True)
    image_max_px = Int(
        768, help="The longer side of a figure read_cell or an execution returns (downscaled when Pillow is there)."
    ).tag(config=True)
    overview_image_px = Int(320, help="The longer side of a figure in read_notebook, which reads many cells.").tag(
        config=True)
    max_images_per_result = Int(6, help="Figures one tool result may return as images.").tag(config=True)
