"""Two real kernels, two hub users, one team cap on a real PostgreSQL: once alice's turns
have spent it, bob's first turn stops before calling the model, and both kernels see the
same spending in ``%agent cost --team``."""

from __future__ import annotations

import json
import os

import pytest

pytestmark = pytest.mark.kernel

SETUP = """\
%load_ext jupyter_brain
from jupyter_brain.providers.base import Usage
from jupyter_brain.providers.scripted import ScriptedProvider

class PricedBot(ScriptedProvider):
    name = "anthropic"  # priced as Claude Sonnet; 1,000 in + 3,000 out = $0.048 a call
    def __init__(self, answers):
        super().__init__([{"text": a, "usage": Usage(input_tokens=1000, output_tokens=3000)} for a in answers],
                         model="claude-sonnet-4-5")
        self.max_tokens = 4096
"""


def _kernel(tmp_path, user: str, policy: str):
    from jupyter_client.manager import start_new_kernel

    folder = tmp_path / user
    folder.mkdir()
    env = {**os.environ, "JUPYTERHUB_USER": user, "JUPYTER_BRAIN_POLICY": policy, "JUPYTER_BRAIN_WARM_UP": "0"}
    return start_new_kernel(kernel_name="python3", cwd=str(folder), env=env)


def _run(kc, code: str) -> str:
    out: list[str] = []

    def keep(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append(f"{msg['content']['ename']}: {msg['content']['evalue']}")

    kc.execute_interactive(code, output_hook=keep, timeout=120)
    return "".join(out)


def test_two_users_kernels_share_a_team_cap_on_postgres(tmp_path, postgres):
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS jupyter_brain_spending, jupyter_brain_ledger_meta")
    policy = tmp_path / "jupyter_brain_policy.json"
    policy.write_text(json.dumps({
        "allowed_providers": ["anthropic"], "max_permission": "ask",
        "teams": {"physics": ["alice", "bob"]}, "budgets": {"team": {"max_cost_per_day": 0.15}},
        "ledger": postgres.url}))
    (km_a, kc_a), (km_b, kc_b) = _kernel(tmp_path, "alice", str(policy)), _kernel(tmp_path, "bob", str(policy))
    try:
        _run(kc_a, SETUP + "bot = PricedBot(['one', 'two', 'three'])")
        _run(kc_b, SETUP + "bot = PricedBot(['never'])")
        for question in ("First question", "Second question"):  # $0.096 of $0.15 after both
            _run(kc_a, f"%%agent --provider bot\n{question}")  # its view is a widget: nothing on stdout
            assert _run(kc_a, "print(_agent.status)").strip() == "completed"
        stopped = _run(kc_b, "%%agent --provider bot\nBob's first question")
        assert "the daily cap of team 'physics' of $0.1500 (cost) is reached" in stopped
        assert "Spent today: $0.0960 (alice $0.0960)" in stopped
        assert _run(kc_b, "print(len(bot.calls))").strip() == "0"  # never called
        report = _run(kc_b, "%agent cost --team")
        assert "team physics: $0.0960 of $0.1500" in report and "bob (you): $0.0000" in report
        assert "Policy " in _run(kc_a, "%agent policy") and "ledger: postgresql://postgres@127.0.0.1" in \
            _run(kc_a, "%agent policy")
    finally:
        for km, kc in ((km_a, kc_a), (km_b, kc_b)):
            kc.stop_channels()
            km.shutdown_kernel(now=True)
