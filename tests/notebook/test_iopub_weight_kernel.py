"""#40 in a real kernel, cells sent as JupyterLab sends them (the view is drawn): the agent
view's front-end code crosses iopub with the kernel's first ``%%agent`` cell only; a later
cell carries the small loader and its own turn. Sizes, not times."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from ..kernel_notebooks import drop_keys, load_extension

pytestmark = pytest.mark.kernel

BUNDLE = Path(__file__).resolve().parents[2] / "jupyter_brain" / "static" / "agent_view.js"


def lab_cell(kc: Any, code: str) -> list[dict[str, Any]]:
    """Run ``code`` with a ``cellId`` and stdin allowed; the iopub messages it caused."""
    msg = kc.session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                             "user_expressions": {}, "allow_stdin": True, "stop_on_error": True})
    msg["metadata"]["cellId"] = str(uuid.uuid4())
    kc.shell_channel.send(msg)
    got = []
    while True:
        reply = kc.get_iopub_msg(timeout=120)
        if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        got.append(reply)
        assert reply["msg_type"] != "error", reply["content"]
        if reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
            break
    assert kc.get_shell_msg(timeout=60)["content"]["status"] == "ok"
    return got


def wire_text(messages: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(m["content"], ensure_ascii=False) for m in messages)


def test_only_the_kernels_first_agent_cell_carries_the_views_code(tmp_path, monkeypatch):
    from jupyter_client.manager import start_new_kernel

    drop_keys(monkeypatch)
    monkeypatch.setenv("JUPYTER_BRAIN_WARM_UP", "0")
    code = BUNDLE.read_text(encoding="utf-8")
    piece = json.dumps(code[:2000], ensure_ascii=False)[1:-1]  # as it reads inside a JSON message
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        lab_cell(kc, load_extension(tmp_path / "jb") +
                 "from jupyter_brain import ScriptedProvider\nbot = ScriptedProvider(['word ' * 200], repeat=True)")
        first, second, third = (wire_text(lab_cell(kc, f"%%agent --provider bot\nWrite ({i}).")) for i in range(3))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert piece in first and len(first) > len(code)
    for later in (second, third):
        assert piece not in later
        assert "need_code" in later  # the loader that stands in for the code
        assert "word word word" in later  # its own turn
        assert len(later) < 30_000, len(later)
