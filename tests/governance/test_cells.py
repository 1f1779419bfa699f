"""The policy in a kernel (an in-process IPython): what a cell may not do is refused
before any call with one line naming the policy; a team's daily cap stops a turn before
the model is called, saying whose cap, what was spent and when it resets; the ledger out
of reach refuses the call; ``send_outputs: false`` keeps values from the model."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_brain.notebook.turn_failure import AgentTurnFailed
from jupyter_brain.providers.base import Usage
from jupyter_brain.providers.scripted import ScriptedProvider


class PricedBot(ScriptedProvider):
    """A scripted model priced as Claude Sonnet: each answer reports 1,000 tokens in and
    3,000 out ($0.048); the next call's estimate is its input + 4,096 out (~$0.06)."""

    name = "anthropic"

    def __init__(self, answers: list[str]) -> None:
        super().__init__([{"text": a, "usage": Usage(input_tokens=1000, output_tokens=3000)} for a in answers],
                         model="claude-sonnet-4-5")
        self.max_tokens = 4096
        self.answers = answers

    def clone(self) -> PricedBot:  # each %%compare run gets its own
        return PricedBot(self.answers)


def team_policy(tmp_path, **extra):
    return {"allowed_providers": ["anthropic", "scripted"], "teams": {"physics": ["alice", "bob"]},
            "budgets": {"team": {"max_cost_per_day": 0.1}}, "ledger": f"sqlite:///{tmp_path / 'ledger.sqlite'}",
            **extra}


def test_a_bad_policy_refuses_every_turn_with_one_line(governed_shell, write_policy, capsys):
    path = write_policy('{"enabled": tru}')
    shell = governed_shell(path)
    assert f"jupyter-brain: policy {path} is not valid JSON" in capsys.readouterr().out
    shell.user_ns["bot"] = ScriptedProvider(["never"])
    with pytest.raises(UsageError, match="does not run without a valid policy"):
        shell.run_cell_magic("agent", "--provider bot", "hello")
    assert shell.user_ns["bot"].calls == []
    shell.run_line_magic("agent", "policy")
    assert "refuses to run until the policy is fixed" in capsys.readouterr().out


def test_a_forbidden_provider_or_model_is_refused_before_the_call(governed_shell, write_policy):
    path = write_policy({"allowed_providers": ["scripted"], "allowed_models": ["scripted"]})
    shell = governed_shell(path)
    shell.user_ns["priced"] = PricedBot(["never"])
    with pytest.raises(UsageError, match=f"provider 'anthropic' .*not allowed by the policy {path}"):
        shell.run_cell_magic("agent", "--provider priced", "hello")
    with pytest.raises(UsageError, match="provider 'openai'"):
        shell.run_cell_magic("agent", "--provider openai", "hello")
    with pytest.raises(UsageError, match="model 'gpt-4o'"):
        shell.run_cell_magic("agent", "--provider bot --model gpt-4o", "hello")
    shell.user_ns["bot"] = ScriptedProvider(["fine"])
    shell.run_cell_magic("agent", "--provider bot", "hello")
    assert shell.user_ns["_agent"].text == "fine"


def test_a_looser_permission_runs_at_the_policys_with_one_line(governed_shell, write_policy, capsys):
    path = write_policy({"max_permission": "read-only", "web": False})
    shell = governed_shell(path)
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    shell.run_cell_magic("agent", "--provider bot --permission auto", "hello")
    out = capsys.readouterr().out
    assert f"--permission auto is looser than the policy {path} allows (max_permission: read-only)" in out
    assert shell.user_ns["_agent"].status == "completed"
    with pytest.raises(UsageError, match="web search"):
        shell.run_cell_magic("agent", "--provider bot --web on", "hello")
    shell.run_line_magic("agent", "policy")
    shown = capsys.readouterr().out
    assert f"Policy {path} (user alice; teams: none)" in shown and "max_permission: read-only" in shown


def test_the_permission_mode_in_force_is_the_policys(governed_shell, write_policy):
    """A tool that writes is blocked under the clamped mode, though the cell asked for auto."""
    shell = governed_shell(write_policy({"max_permission": "read-only"}))
    shell.user_ns["bot"] = ScriptedProvider([
        {"tool_calls": [{"name": "run_python", "arguments": {"code": "x = 1"}}]}, "done"])
    shell.run_cell_magic("agent", "--provider bot --permission auto", "set x")
    result = shell.user_ns["_agent"]
    assert "x" not in shell.user_ns
    assert [c.status for c in result.tool_calls] != ["ok"]


def test_a_team_cap_spent_by_one_user_stops_the_others_first_turn_before_the_model(
        governed_shell, write_policy, tmp_path, capsys):
    path = write_policy(team_policy(tmp_path))
    alice = governed_shell(path, user="alice")
    alice.user_ns["bot"] = PricedBot(["one", "two", "three"])
    alice.run_cell_magic("agent", "--provider bot", "first")
    assert alice.user_ns["_agent"].status == "completed"
    with pytest.raises(AgentTurnFailed):  # $0.048 spent; the next call's most ($0.064) could cross $0.10
        alice.run_cell_magic("agent", "--provider bot", "second")
    assert alice.user_ns["_agent"].status == "budget"
    capsys.readouterr()
    alice.run_line_magic("agent", "cost --team")
    report = capsys.readouterr().out
    assert "team physics: $0.0480 of $0.1000" in report and "alice (you): $0.0480" in report

    bob = governed_shell(path, user="bob")
    bob_bot = PricedBot(["never"])
    bob.user_ns["bot"] = bob_bot
    with pytest.raises(AgentTurnFailed, match=r"the turn stopped \(budget\)"):  # the cell fails, Run All stops
        bob.run_cell_magic("agent", "--provider bot", "my first question")
    result = bob.user_ns["_agent"]
    assert result.status == "budget"
    assert bob_bot.calls == []  # the model was never called
    assert "the daily cap of team 'physics' of $0.1000 (cost) is reached" in result.text
    assert "Spent today: $0.0480 (alice $0.0480)" in result.text
    assert "The cap resets at" in result.text and "UTC (in " in result.text and path in result.text


def test_an_unreachable_ledger_refuses_the_call(governed_shell, write_policy, tmp_path):
    (tmp_path / "blocked").mkdir()
    policy = team_policy(tmp_path, ledger=f"sqlite:///{tmp_path / 'blocked'}")  # a folder, not a database
    shell = governed_shell(write_policy(policy))
    bot = PricedBot(["never"])
    shell.user_ns["bot"] = bot
    with pytest.raises(AgentTurnFailed):
        shell.run_cell_magic("agent", "--provider bot", "hello")
    result = shell.user_ns["_agent"]
    assert result.status == "budget" and bot.calls == []
    assert "cannot be used" in result.text and "no call is made while it cannot be reached" in result.text


def test_send_outputs_false_sends_names_types_and_shapes_only(governed_shell, write_policy):
    shell = governed_shell(write_policy({"send_outputs": False}))
    shell.user_ns["secret"] = "the password is swordfish"
    shell.user_ns["numbers"] = [1, 2, 3]
    seen: list[str] = []

    def answer(messages, tools):
        seen.append(repr(messages))
        if len(seen) == 1:
            return {"tool_calls": [{"name": "list_variables", "arguments": {}},
                                   {"name": "inspect_variable", "arguments": {"name": "secret"}}]}
        if len(seen) == 2:
            return {"tool_calls": [{"name": "run_python", "arguments": {"code": "print(secret); y = numbers * 2"}}]}
        return "done"

    shell.user_ns["bot"] = ScriptedProvider([answer, answer, answer])
    shell.run_cell_magic("agent", "--provider bot --permission auto", "what is in secret?")
    sent = "\n".join(seen)
    assert "swordfish" not in sent
    assert "secret: str — len 25" in sent and "- y: list — len 6" in sent
    assert "send_outputs: false" in sent


def test_an_mcp_server_outside_the_policys_list_is_never_started(governed_shell, write_policy, capsys):
    import sys

    from jupyter_brain.mcp.manager import kernel_manager, shutdown_kernel_manager

    from ..mcp_client.servers import DEMO

    path = write_policy({"mcp_servers": ["git"]})
    shell = governed_shell(path)
    try:
        shell.run_line_magic("agent", f"mcp add demo -- {sys.executable} {DEMO}")
        bot = ScriptedProvider(["No tools here."])
        shell.user_ns["bot"] = bot
        shell.run_cell_magic("agent", "--provider bot", "What colour is an apple?")
        out = capsys.readouterr().out
        assert f"MCP server 'demo' is not in the policy's mcp_servers ({path}): not connected" in out
        assert "demo" not in kernel_manager().connections
        assert not any(t["name"].startswith("demo__") for t in bot.calls[0]["tools"])
        shutdown_kernel_manager()  # a new manager of the kernel keeps the policy
        assert kernel_manager().admit("demo") is not None
    finally:
        shutdown_kernel_manager()


def test_compare_runs_are_under_the_policy_too(governed_shell, write_policy, tmp_path):
    """%%compare cannot loosen the policy: a forbidden provider is refused, and every run's
    calls are reserved in the same ledger against the team's cap."""
    path = write_policy(team_policy(tmp_path, allowed_providers=["anthropic"]))
    shell = governed_shell(path, user="alice")
    with pytest.raises(UsageError, match="provider 'openai'"):
        shell.run_cell_magic("compare", "--strategies react --provider openai", "hi")  # a name: refused first
    shell.user_ns["bot"] = PricedBot(["one", "two", "three", "four"])
    try:
        shell.run_cell_magic("compare", "--strategies react,cot --provider bot", "hello")
    except Exception:  # noqa: BLE001 - a run stopped by the cap may fail the cell; the rows tell
        pass
    rows = shell.user_ns["_compare"].rows
    assert sorted(r["status"] for r in rows) == ["budget", "completed"]  # $0.048 + a $0.064 most > $0.10
    from jupyter_brain.governance import Ledger

    spent = Ledger(f"sqlite:///{tmp_path / 'ledger.sqlite'}").spending(["alice"])["alice"]
    assert spent.cost_usd == pytest.approx(0.048)


def test_an_outside_agent_engine_is_refused_when_the_policy_says_outside_agents_false(
        governed_shell, write_policy, tmp_path, monkeypatch):
    """``outside_agents: false`` refuses ``--engine`` before the agent is looked for or
    started (its program is not even on PATH here), naming the policy; the built-in
    harness still runs."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no claude-code-acp: a refusal must come first
    path = write_policy({"outside_agents": False})
    shell = governed_shell(path)
    with pytest.raises(UsageError, match=rf"--engine claude-code \(outside_agents: false\): not allowed by the policy {path}"):
        shell.run_cell_magic("agent", "--engine claude-code", "hello")
    shell.user_ns["bot"] = ScriptedProvider(["fine"])
    shell.run_cell_magic("agent", "--provider bot", "hello")
    assert shell.user_ns["_agent"].text == "fine"


def test_send_outputs_false_refuses_agent_fix_before_anything_is_sent(governed_shell, write_policy):
    """``%agent fix`` sends a traceback (a cell's output) and the values the cell touches."""
    path = write_policy({"send_outputs": False})
    shell = governed_shell(path)
    bot = ScriptedProvider(["```python\nx = 1\n```"])
    shell.user_ns["bot"] = bot
    shell.run_line_magic("config", "AgentMagics.provider = 'bot'")
    shell.run_cell("1 / 0")
    with pytest.raises(UsageError, match=rf"%agent fix: not allowed by the policy {path} \(send_outputs: false\)"):
        shell.run_line_magic("agent", "fix")
    assert bot.calls == []
