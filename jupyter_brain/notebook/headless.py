"""Whether anyone is at the other end of the kernel: a headless run waits for no front-end.

``jupyter nbconvert --execute``, papermill and nbval drive the kernel through nbclient
(or a client like it): nobody sees a widget, no JupyterLab extension answers a comm and
nobody can type at a stdin prompt. Waiting for them only costs time (the extension's
``ready``, an approval card nobody draws), so a headless kernel does not.

The kernel tells from the execute request it is running: a request that carries no
``cellId`` in its metadata (JupyterLab and Notebook 7 send one; nbclient, papermill and
nbval do not) *and* does not allow stdin (nbclient and nbval set ``allow_stdin=False``;
JupyterLab, VS Code and ``jupyter console`` allow it) comes from a client with nobody at
it. Either sign alone is not enough: VS Code sends no ``cellId`` but has a person and a
widget front-end; a front-end without stdin may still draw widgets when it names its
cell. Without a kernel (terminal IPython) someone is at stdin: not headless.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..agent.executor import Approval

HEADLESS_CHANNEL = "headless"  # ApprovalDecision.channel of an approval nobody could give


def execute_request(shell: Any) -> dict[str, Any] | None:
    """The execute request the kernel is handling now (header, metadata, content), if any."""
    kernel = getattr(shell, "kernel", None)
    parent: Any = None
    if kernel is not None and hasattr(kernel, "get_parent"):
        try:
            parent = kernel.get_parent()
        except Exception:  # noqa: BLE001 - older ipykernels take a channel argument; fall back below
            parent = None
    if not parent:
        parent = getattr(shell, "parent_header", None)
    return parent if isinstance(parent, dict) else None


def request_cell_id(shell: Any) -> str | None:
    """The ``cellId`` a notebook front-end put in the request's metadata, if any."""
    metadata = (execute_request(shell) or {}).get("metadata")
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    return str(cell_id) if cell_id else None


def stdin_allowed(shell: Any) -> bool:
    """Whether the current request lets the kernel ask on stdin (``input()`` works)."""
    request = execute_request(shell) or {}
    content = request.get("content")
    if isinstance(content, dict) and "allow_stdin" in content:
        return bool(content["allow_stdin"])
    return bool(getattr(getattr(shell, "kernel", None), "_allow_stdin", False))


def is_headless(shell: Any) -> bool:
    """True in a kernel whose current request has no ``cellId`` and no stdin (nbclient,
    nbconvert, papermill, nbval); False without a kernel or with either sign of a person."""
    if shell is None or getattr(shell, "kernel", None) is None:
        return False
    return request_cell_id(shell) is None and not stdin_allowed(shell)


class HeadlessApprover:
    """The approver of a headless turn: nobody can approve, so it denies at once (the model
    is told why: no widget front-end, no stdin) instead of waiting for a card nobody draws."""

    def __init__(self) -> None:
        self.denied = 0  # how many calls it refused (for tests and the benchmark)

    def __call__(self, call: Any, spec: Any, arguments: Any) -> Approval:
        from ..agent.executor import Approval

        self.denied += 1
        return Approval(False, by="no_frontend", channel=HEADLESS_CHANNEL)
