"""The MCP SDK loads only when a server is configured: not with ``%load_ext``, not for
``%agent mcp list``, not for a turn in a project without ``mcp.json``."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_no_sdk_import_without_servers(tmp_path):
    probe = textwrap.dedent("""
        import sys
        from IPython.core.interactiveshell import InteractiveShell
        from jupyter_brain.providers.scripted import ScriptedProvider
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "jupyter_brain")
        loaded = {"load_ext": "mcp" in sys.modules}
        shell.run_line_magic("agent", "mcp list")
        shell.user_ns["bot"] = ScriptedProvider(["hi"])
        shell.run_cell_magic("agent", "--provider bot", "hello")
        loaded["turn"] = "mcp" in sys.modules
        loaded["manager"] = "jupyter_brain.mcp.manager" in sys.modules
        print(loaded)
    """)
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "{'load_ext': False, 'turn': False, 'manager': False}"
