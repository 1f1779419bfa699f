"""An %%agent cell in a real kernel, executed like nbconvert does: what the notebook keeps."""

from __future__ import annotations

import nbformat
import pytest

from ..kernel_notebooks import drop_keys, execute, load_extension

pytestmark = pytest.mark.kernel


def test_agent_output_keeps_widget_and_markdown_transcript(tmp_path, monkeypatch):
    drop_keys(monkeypatch)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            load_extension(tmp_path / 'jb') +
            "from jupyter_brain import ScriptedProvider\n"
            "bot = ScriptedProvider(['<think>compare months</think>**March** dropped most.'])"
        ),
        nbformat.v4.new_code_cell("%%agent --provider bot --think low\nWhich month dropped most?"),
        nbformat.v4.new_code_cell("print(_agent.status)"),
    ]
    execute(nb, tmp_path)
    outputs = nb.cells[1].outputs
    displays = [o for o in outputs if o.output_type == "display_data"]
    assert len(displays) == 1, outputs
    data = displays[0].data
    assert "application/vnd.jupyter.widget-view+json" not in data  # the finished turn is data, not a widget
    assert data["application/vnd.jupyter-brain.turn+json"]["status"] == "completed"
    assert "status='completed'" in data["text/plain"]
    markdown = data["text/markdown"]
    assert "**March** dropped most." in markdown and "compare months" in markdown
    assert nb.cells[2].outputs[0].text.strip() == "completed"


def test_kernel_interrupt_mid_stream_stops_cleanly_and_next_cell_works(tmp_path, monkeypatch):
    import time

    from jupyter_client.manager import start_new_kernel

    drop_keys(monkeypatch)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        setup = (
            "%load_ext jupyter_brain\n"
            "from jupyter_brain import ScriptedProvider\n"
            "slow = ScriptedProvider(['word ' * 2000], delay_s=0.01)\n"
            "fast = ScriptedProvider(['all good'])\n"
        )
        assert kc.execute_interactive(setup, timeout=60)["content"]["status"] == "ok"
        msg_id = kc.execute("%%agent --provider slow\nwrite a lot")
        queued = kc.execute("ran_after_interrupt = True")  # the next cell of a Run All, queued behind it
        # Wait until text is streaming, then interrupt the kernel (what the stop button does).
        deadline = time.monotonic() + 30
        streaming = False
        while time.monotonic() < deadline and not streaming:
            msg = kc.get_iopub_msg(timeout=10)
            streaming = msg["msg_type"] == "comm_msg" and msg["parent_header"].get("msg_id") == msg_id
        assert streaming
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        # The cell fails as an interrupted cell does (AgentMagics.fail_on), in one line, not a
        # KeyboardInterrupt traceback; so the rest of a Run All is not run.
        content = reply["content"]
        assert content["status"] == "error" and content["ename"] == "AgentTurnFailed", content
        assert len(content["traceback"]) == 1 and "(interrupted)" in content["traceback"][0], content
        after = kc.get_shell_msg(timeout=30)
        assert after["parent_header"]["msg_id"] == queued and after["content"]["status"] == "aborted"
        out = []
        kc.execute_interactive("print(_agent.status, _agent.messages[-1]['role'])", timeout=30,
                               output_hook=lambda m: out.append(m["content"].get("text", "")))
        assert "interrupted assistant" in "".join(out)
        out.clear()
        kc.execute_interactive("print('ran_after_interrupt' in globals())", timeout=30,
                               output_hook=lambda m: out.append(m["content"].get("text", "")))
        assert "False" in "".join(out)
        out.clear()
        kc.execute_interactive("%%agent --provider fast\nagain", timeout=30)
        kc.execute_interactive("print(_agent.status, _agent.text)", timeout=30,
                               output_hook=lambda m: out.append(m["content"].get("text", "")))
        assert "completed all good" in "".join(out)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
