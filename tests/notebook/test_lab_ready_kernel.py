"""The extension's ``ready`` reaches a running turn, in a real ipykernel, however long the
kernel takes to create its subshell.

``%load_ext`` opens a comm to the JupyterLab extension, which answers ``ready`` within
milliseconds. That answer is routed to a kernel subshell so that a turn queued behind
``%load_ext`` (Run All) sees it. Fresh-clone CI once got the ``--cells`` one-cell
fallback because the comm was opened first and routed after: creating the subshell took
longer than the extension's answer, which went to the main shell, queued behind the
very turn waiting for it (#23). Here the subshell's creation is slowed down on purpose
and the client answers the moment it sees the comm open.
"""

from __future__ import annotations

import pytest

from ..kernel_notebooks import drop_keys, printed

pytestmark = pytest.mark.kernel

SLOW_SUBSHELL = """
import time
import jupyter_brain.notebook.kernel_channel as kernel_channel
_create = kernel_channel._subshell_id
def _slowly(kernel):
    time.sleep(2)  # a loaded machine
    return _create(kernel)
kernel_channel._subshell_id = _slowly
"""

LOAD = "%load_ext jupyter_brain"

# Queued right behind %load_ext, as Run All queues the next cell (here: what a turn's
# settle waits for, the extension's version).
WAIT_FOR_READY = """
lab = get_ipython().magics_manager.registry["AgentMagics"].lab
start = time.monotonic()
while lab.version is None and time.monotonic() - start < 30:
    time.sleep(0.02)
print("READY", lab.version)
print("\\n".join(lab.trail))
"""


def test_a_ready_that_comes_at_once_reaches_the_turn_queued_behind_load_ext(tmp_path, monkeypatch):
    from jupyter_client.manager import start_new_kernel

    drop_keys(monkeypatch)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        assert printed(kc, kc.execute(SLOW_SUBSHELL)) == ""
        kc.execute(LOAD)
        waiting = kc.execute(WAIT_FOR_READY)  # queued now, before the comm even opens

        def answer(content):  # the extension: ready, the moment the comm opens
            if content.get("target_name") == "jupyter_brain.lab":
                kc.shell_channel.send(kc.session.msg(
                    "comm_msg", {"comm_id": content["comm_id"], "data": {"type": "ready", "version": "9.9.9"}}))

        out = printed(kc, waiting, on_open=answer)
        assert "READY 9.9.9" in out, out
        assert "(on a subshell)" in out, out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
