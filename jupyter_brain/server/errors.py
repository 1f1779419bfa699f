"""The one exception a tool raises for bad input: its message goes back to the agent."""

from __future__ import annotations


class ToolProblem(Exception):
    """A call the endpoint refuses or cannot carry out, said in one line the agent can act on
    (a path outside the root, an index out of range, a missing notebook, a refused edit)."""
