"""The admin's policy over the MCP endpoint (issues #35, #38): ``outside_agents: false`` closes
it, a broken policy closes it, ``max_permission`` caps the server's permission; with no
policy the server's own setting stands. A real server refuses every call, naming the policy,
and nothing is read, changed or run."""

from __future__ import annotations

import json

import nbformat
import pytest

from jupyter_brain.server.gate import Gate, OutsideSession, Refused
from jupyter_brain.server.policy import endpoint_policy

from .jupyter import call_tools, start_server, write_notebook


def _policy(tmp_path, document) -> dict[str, str]:
    path = tmp_path / "policy.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return {"JUPYTER_BRAIN_POLICY": str(path), "JUPYTERHUB_USER": "alice"}


def test_no_policy_leaves_the_servers_permission(tmp_path) -> None:
    assert endpoint_policy("auto", {"JUPYTER_CONFIG_PATH": str(tmp_path), "HOME": str(tmp_path)}).closed is None


def test_outside_agents_false_closes_the_endpoint_reading_included(tmp_path) -> None:
    env = _policy(tmp_path, {"outside_agents": False})
    policy = endpoint_policy("auto", env)
    assert policy.closed is not None and env["JUPYTER_BRAIN_POLICY"] in policy.closed
    gate = Gate(policy.permission, 0, policy.closed)
    with pytest.raises(Refused, match=r"read_notebook refused: outside agents are not allowed by the policy .*"
                                      r"\(outside_agents: false\)"):
        gate.check(OutsideSession("s"), "read_notebook", "read")


def test_max_permission_caps_the_server_and_a_broken_policy_closes_it(tmp_path) -> None:
    assert endpoint_policy("auto", _policy(tmp_path, {"max_permission": "read-only"})).permission == "read-only"
    assert endpoint_policy("read-only", _policy(tmp_path, {"max_permission": "auto"})).permission == "read-only"
    broken = endpoint_policy("auto", _policy(tmp_path, '{"enabled": tru}'))
    assert broken.closed is not None and "not valid JSON" in broken.closed


@pytest.mark.kernel
def test_a_real_server_under_outside_agents_false_refuses_every_call(tmp_path, monkeypatch) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "nb.ipynb", ["x = 1"])
    for key, value in _policy(tmp_path, {"outside_agents": False}).items():
        monkeypatch.setenv(key, value)  # the server's environment, as an admin's would be
    server = start_server(root, "--JupyterBrainMCP.permission=auto")
    try:
        replies = call_tools(server, [("read_notebook", {"path": "nb.ipynb"}),
                                      ("execute_code", {"path": "nb.ipynb", "code": "open('ran.txt', 'w')"})])
    finally:
        server.stop()
    assert all(r.is_error and "outside_agents: false" in r.text for r in replies), [r.text for r in replies]
    assert not (root / "ran.txt").exists()
    assert [c.source for c in nbformat.read(root / "nb.ipynb", as_version=4).cells] == ["x = 1"]
