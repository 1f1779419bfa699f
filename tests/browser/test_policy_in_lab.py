"""The admin's policy in real JupyterLab (issue #38): a team whose daily cap another member
already spent; bob's first turn stops before the model is called, and the view says whose
cap it was, what was spent and when it resets. The ledger is seeded as alice's kernel would
have left it (a settled call of $0.048 today), so only bob's kernel runs here."""

from __future__ import annotations

import json

import pytest

from .conftest import open_notebook, run_cell, screenshot, wait_idle_after_run, write_notebook

pytestmark = pytest.mark.browser

SETUP = """import json, os, tempfile
from pathlib import Path
folder = Path(tempfile.mkdtemp())
{policy}
(folder / "policy.json").write_text(json.dumps(policy))
os.environ.update({"JUPYTER_BRAIN_POLICY": str(folder / "policy.json"), "JUPYTERHUB_USER": "alice"})
from jupyter_brain.governance.ledger import Ledger
from jupyter_brain.providers.base import Usage
ledger = Ledger(policy["ledger"])  # alice's call today, as her kernel settled it
ledger.settle(ledger.reserve("alice", [], 0.048, 4000), 0.048, 4000)
ledger.close()
os.environ["JUPYTERHUB_USER"] = "bob"
%load_ext jupyter_brain
%config AgentMagics.data_dir = str(folder / "jb")
from jupyter_brain.providers.scripted import ScriptedProvider
class PricedBot(ScriptedProvider):
    name = "anthropic"
priced = PricedBot([{"text": "never", "usage": Usage(input_tokens=1000, output_tokens=3000)}], model="claude-sonnet-4-5")
priced.max_tokens = 4096"""

AGENT = "%%agent --provider priced\nWhich month had the largest revenue drop?"
CHECK = "print('model calls:', len(priced.calls))"


def test_a_turn_over_the_team_cap_is_refused_before_the_model(lab, page, tmp_path):
    base, root = lab
    policy = {"allowed_providers": ["anthropic"], "teams": {"physics": ["alice", "bob"]},
              "budgets": {"team": {"max_cost_per_day": 0.1}}, "ledger": f"sqlite:///{tmp_path / 'ledger.sqlite'}"}
    write_notebook(root, "policy.ipynb", [SETUP.replace("{policy}", f"policy = json.loads({json.dumps(policy)!r})"),
                                          AGENT, CHECK])
    open_notebook(page, base, "policy.ipynb")
    for index in range(3):  # one by one: the refused turn fails its cell, which would stop a Run All
        run_cell(page, index)
        wait_idle_after_run(page)
    shown = page.locator(".jp-Cell").nth(1).inner_text()
    assert "physics" in shown and "$0.0480" in shown and "resets" in shown, shown
    assert "Traceback" not in shown
    assert "model calls: 0" in page.locator(".jp-Cell").nth(2).inner_text()
    screenshot(page, "policy_team_cap_refused")
