"""In a real Jupyter kernel: the servers a turn started stop when the kernel shuts down or
restarts, leaving no process behind."""

from __future__ import annotations

import sys

import pytest

from .servers import DEMO, alive, gone

pytestmark = [pytest.mark.kernel, pytest.mark.mcp_server]

SETUP = f"""
%load_ext jupyter_brain
from jupyter_brain import ScriptedProvider
%agent mcp add demo -- {sys.executable} {DEMO}
from jupyter_brain.mcp.manager import kernel_manager
kernel_manager().startup_timeout_s = 120  # a bound only: a loaded machine starts servers slowly
bot = ScriptedProvider([{{"tool_calls": [{{"name": "demo__pid", "arguments": {{}}}}]}}, "ok"])
"""


def _server_pid(kc) -> int:
    assert kc.execute_interactive(SETUP, timeout=60)["content"]["status"] == "ok"
    reply = kc.execute_interactive("%%agent --provider bot\nwhich pid?", timeout=120)
    assert reply["content"]["status"] == "ok"
    outputs = []
    kc.execute_interactive("print(_agent.tool_calls[0].output)", timeout=30,
                           output_hook=lambda msg: outputs.append(msg["content"].get("text", "")))
    return int("".join(outputs).strip())


@pytest.mark.parametrize("how", ["shutdown", "restart"])
def test_no_server_survives_its_kernel(tmp_path, monkeypatch, how):
    from jupyter_client.manager import start_new_kernel

    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        pid = _server_pid(kc)
        assert alive(pid)
        if how == "restart":
            km.restart_kernel()
        else:
            kc.stop_channels()
            km.shutdown_kernel()
        assert gone(pid)
    finally:
        if km.is_alive():
            kc.stop_channels()
            km.shutdown_kernel(now=True)
