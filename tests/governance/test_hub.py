"""A real JupyterHub (jupyterhub from pip, configurable-http-proxy from npm pinned in
tests/governance/npm, the dummy authenticator, the simple local spawner): two users log
in, their servers' kernels run under the admin's policy and share the team ledger on a
real PostgreSQL. Alice's turns spend the team's cap; Bob's first turn stops before the model."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from .postgres import free_port

pytestmark = pytest.mark.kernel
PROXY = Path(__file__).with_name("npm") / "node_modules" / ".bin" / "configurable-http-proxy"
SETUP = """\
%load_ext jupyter_brain
from jupyter_brain.providers.base import Usage
from jupyter_brain.providers.scripted import ScriptedProvider
class PricedBot(ScriptedProvider):
    name = "anthropic"
    def __init__(self, answers):
        super().__init__([{"text": a, "usage": Usage(input_tokens=1000, output_tokens=3000)} for a in answers],
                         model="claude-sonnet-4-5")
        self.max_tokens = 4096
"""


def _config(tmp_path: Path, token: str, port: int, policy: Path) -> Path:
    config = tmp_path / "jupyterhub_config.py"
    config.write_text(f"""
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {str(tmp_path / "home" / "{username}")!r}
c.Spawner.cmd = [{sys.executable!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.args = {["--allow-root"] if os.geteuid() == 0 else []!r}  # CI runs as root
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {{"JUPYTER_BRAIN_POLICY": {str(policy)!r}, "PYTHONPATH": {os.environ.get("PYTHONPATH", "")!r},
                         "JUPYTER_BRAIN_WARM_UP": "0"}}
c.JupyterHub.db_url = "sqlite:///{tmp_path / 'hub.sqlite'}"
c.JupyterHub.cookie_secret_file = {str(tmp_path / "cookie_secret")!r}
c.ConfigurableHTTPProxy.pid_file = {str(tmp_path / "proxy.pid")!r}
c.JupyterHub.load_roles = [{{"name": "tester", "scopes": ["admin:users", "admin:servers", "access:servers"],
                            "services": ["tester"]}}]
c.JupyterHub.services = [{{"name": "tester", "api_token": {token!r}}}]
""")
    return config


def _execute(base: str, user: str, token: str, code: str) -> str:
    """Run ``code`` in a new kernel of ``user``'s server, over the server's websocket."""
    import requests
    from tornado.httpclient import HTTPRequest
    from tornado.ioloop import IOLoop
    from tornado.websocket import websocket_connect

    headers = {"Authorization": f"token {token}"}
    kernel = requests.post(f"{base}/user/{user}/api/kernels", headers=headers, json={"name": "python3"},
                           timeout=60).json()["id"]

    async def run() -> str:
        url = f"{base.replace('http', 'ws')}/user/{user}/api/kernels/{kernel}/channels"
        ws = await websocket_connect(HTTPRequest(url, headers=headers))
        msg_id = uuid.uuid4().hex
        ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": user, "session": uuid.uuid4().hex, "msg_type": "execute_request",
                       "version": "5.3"}, "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        out: list[str] = []
        while True:
            reply = json.loads(await ws.read_message())
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if reply["msg_type"] == "stream":
                out.append(reply["content"]["text"])
            elif reply["msg_type"] in ("display_data", "update_display_data", "execute_result"):
                data = reply["content"].get("data", {})
                out.append(data.get("text/markdown") or data.get("text/plain") or "")
            elif reply["msg_type"] == "error":
                out.append(f"{reply['content']['ename']}: {reply['content']['evalue']}")
            elif reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
                ws.close()
                return "".join(out)

    return IOLoop.current().run_sync(run, timeout=180)


def test_two_hub_users_kernels_enforce_the_policy_and_share_the_ledger(tmp_path, postgres):
    pytest.importorskip("jupyterhub")
    if not PROXY.exists():
        pytest.skip("configurable-http-proxy is not installed: npm ci in tests/governance/npm")
    import psycopg
    import requests

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS jupyter_brain_spending, jupyter_brain_ledger_meta")
    policy = tmp_path / "jupyter_brain_policy.json"
    policy.write_text(json.dumps({"allowed_providers": ["anthropic"], "max_permission": "ask",
                                  "teams": {"physics": ["alice", "bob"]},
                                  "budgets": {"team": {"max_cost_per_day": 0.15}}, "ledger": postgres.url}))
    token, port = secrets.token_hex(16), free_port()
    config = _config(tmp_path, token, port, policy)
    hub = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=tmp_path,
                           stdout=open(tmp_path / "hub.log", "w"), stderr=subprocess.STDOUT)
    base, api = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/hub/api"
    headers = {"Authorization": f"token {token}"}
    try:
        for _ in range(120):
            try:
                if requests.get(f"{api}/", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            time.sleep(0.5)
        else:
            raise AssertionError(f"the hub did not answer: {(tmp_path / 'hub.log').read_text()[-2000:]}")
        for user in ("alice", "bob"):  # logging in as the dummy authenticator allows
            session = requests.Session()
            session.get(f"{base}/hub/login", timeout=30)
            login = session.post(f"{base}/hub/login", data={"username": user, "password": "any",
                                                             "_xsrf": session.cookies.get("_xsrf", "")},
                                 timeout=60, allow_redirects=False)
            assert login.status_code == 302 and "jupyterhub-session-id" in session.cookies, login.text[:300]
            requests.post(f"{api}/users/{user}/server", headers=headers, timeout=60)
        for user in ("alice", "bob"):
            for _ in range(240):
                state = requests.get(f"{api}/users/{user}", headers=headers, timeout=10).json()
                if state["servers"].get("", {}).get("ready"):
                    break
                time.sleep(0.5)
            else:
                raise AssertionError(f"{user}'s server did not start: {(tmp_path / 'hub.log').read_text()[-2000:]}")
        first = _execute(base, "alice", token, SETUP + "bot = PricedBot(['one', 'two'])\n"
                         "get_ipython().run_cell_magic('agent', '--provider bot', 'First question')\n"
                         "get_ipython().run_cell_magic('agent', '--provider bot', 'Second question')\n")
        assert first.count("completed") == 2, first
        stopped = _execute(base, "bob", token, SETUP + "bot = PricedBot(['never'])\n"
                           "try:\n"
                           "    get_ipython().run_cell_magic('agent', '--provider bot --permission auto', 'Hi')\n"
                           "except Exception as exc:  # AgentMagics.fail_on: a budget stop fails the cell\n"
                           "    print('cell failed:', type(exc).__name__)\n"
                           "print('text:', _agent.text)\n"
                           "print('calls:', len(bot.calls))\n"
                           "get_ipython().run_line_magic('agent', 'policy')\n")
        assert f"--permission auto is looser than the policy {policy} allows" in stopped
        assert "the daily cap of team 'physics' of $0.1500 (cost) is reached" in stopped
        assert "Spent today: $0.0960 (alice $0.0960)" in stopped and "calls: 0" in stopped
        assert "cell failed: AgentTurnFailed" in stopped
        assert "(user bob; teams: physics)" in stopped
    finally:
        for user in ("alice", "bob"):
            try:
                requests.delete(f"{api}/users/{user}/server", headers=headers, timeout=30)
            except requests.RequestException:
                pass
        hub.terminate()
        try:
            hub.wait(30)
        except subprocess.TimeoutExpired:
            hub.kill()
