"""%%agent and %agent in a real (in-process) IPython shell, with the scripted provider."""

from __future__ import annotations

import os

import pytest
from IPython.core.error import UsageError

from jupyter_brain.agent.events import EventLog
from jupyter_brain.notebook.interpolate import interpolate
from jupyter_brain.notebook.turn_failure import AgentTurnFailed
from jupyter_brain.providers.base import StreamEvent
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import SessionManager


def agent(sh, line, cell):
    return sh.run_cell_magic("agent", line, cell)


def test_turn_runs_and_stores_result(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["The answer is 42."])
    agent(shell, "--provider bot --out res", "What is the answer?")
    result = shell.user_ns["res"]
    assert result is shell.user_ns["_agent"]
    assert result.text == "The answer is 42." and result.status == "completed"
    assert "The answer is 42." in capsys.readouterr().out  # terminal IPython: text view


def test_prompt_interpolation_reaches_model(shell):
    bot = ScriptedProvider(["ok"])
    shell.user_ns.update(bot=bot, region="north", In=["", "df.head()"])
    agent(shell, "--provider bot", "Sales in {region}; last cell {In[1]}; unknown {nope}; json {\"a\": 1}")
    sent = bot.calls[0]["messages"][-1]["content"]
    assert sent == 'Sales in north; last cell df.head(); unknown {nope}; json {"a": 1}'


def test_interpolate_caps_long_values():
    out = interpolate("{big}", {"big": "x" * 10_000}, limit=100)
    assert out.startswith("x" * 100) and "9,900 more characters" in out


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("--think maximum", "invalid choice: 'maximum'"),
        ("--strategy magic", "choose from 'react', 'reflexion', 'cot', 'tot', 'none'"),
        ("--max-steps 0", "must be at least 1"),
        ("--max-steps many", "invalid _positive_int value"),
        ("--reflect-every -1", "must be 0 or more"),
        ("--permission yolo", "'read-only', 'ask', 'auto'"),
        ("--frobnicate", "unrecognized arguments: --frobnicate"),
        ("--provider nosuch", "unknown provider 'nosuch'"),
        ("--out 'not a name' --provider bot", "--out needs a variable name"),
    ],
)
def test_bad_flags_give_usage_errors(shell, line, needle):
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    with pytest.raises(UsageError) as info:
        agent(shell, line, "hello")
    assert needle in str(info.value)


def test_empty_prompt_and_missing_model_are_clear(shell):
    with pytest.raises(UsageError, match="write the prompt in the cell body"):
        agent(shell, "", "   \n")
    with pytest.raises(UsageError, match="no model is configured"):
        agent(shell, "", "hello")


def test_provider_variable_of_wrong_type(shell):
    shell.user_ns["bot"] = 42
    with pytest.raises(UsageError, match="is a int, not an LLM provider"):
        agent(shell, "--provider bot", "hello")


def test_reflect_every_with_think_off_prints_notice(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    agent(shell, "--provider bot --reflect-every 2", "hello")
    assert "--reflect-every needs a think level" in capsys.readouterr().out


def test_flags_reach_harness(shell):
    bot = ScriptedProvider(["Final Answer: ok"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot --think high --strategy tot --max-steps 3 --timeout 9 --permission read-only --no-stream", "q")
    magics = shell.magics_manager.registry["AgentMagics"]
    harness = magics.manager.current.last_harness
    assert harness.think_level.value == "high" and harness.strategy.name == "Tree-of-Thoughts"
    assert harness.max_steps == 3 and harness.timeout_s == 9 and harness.stream is False
    assert harness.tools.permission_mode.value == "read-only"
    assert "Tree-of-Thoughts" in bot.calls[0]["messages"][0]["content"]


def test_history_continues_and_sessions_switch(shell, capsys):
    bot = ScriptedProvider(["one", "two", "three"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "first")
    agent(shell, "--provider bot", "second")
    second_request = [m["content"] for m in bot.calls[1]["messages"] if m["role"] in ("user", "assistant")]
    assert second_request == ["first", "one", "second"]
    agent(shell, "--provider bot --session other", "third")
    assert [m["content"] for m in bot.calls[2]["messages"] if m["role"] == "user"] == ["third"]
    capsys.readouterr()
    shell.run_line_magic("agent", "sessions")
    out = capsys.readouterr().out
    assert "default  (2 turns)" in out and "* other  (1 turn)" in out


def test_reset_new_use_and_reopen_in_new_kernel(shell, tmp_path, capsys):
    bot = ScriptedProvider(["a1", "b1", "a2"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot --session alpha", "alpha question")
    shell.run_line_magic("agent", "new beta")
    agent(shell, "--provider bot", "beta question")
    shell.run_line_magic("agent", "use alpha")
    magics = shell.magics_manager.registry["AgentMagics"]
    assert magics.manager.current.name == "alpha" and len(magics.manager.current.history) == 2
    # A new kernel: a fresh manager on the same folder restores the history.
    magics.manager.event_log.flush()
    reopened = SessionManager(tmp_path / ".jupyter_brain")
    assert [m["content"] for m in reopened.use("alpha").history] == ["alpha question", "a1"]
    reopened.event_log.close()
    shell.run_line_magic("agent", "reset")
    assert magics.manager.current.history == []
    again = SessionManager(tmp_path / ".jupyter_brain", event_log=EventLog(tmp_path / ".jupyter_brain" / "events.sqlite"))
    assert again.use("alpha").history == []
    again.event_log.close()


def test_config_subcommand_and_traitlets_config(shell, capsys):
    shell.run_line_magic("agent", "config think=medium max_steps=4")
    shell.run_line_magic("config", "AgentMagics.strategy = 'react'")
    magics = shell.magics_manager.registry["AgentMagics"]
    assert (magics.think, magics.max_steps, magics.strategy) == ("medium", 4, "react")
    with pytest.raises(UsageError, match="unknown key 'colour'"):
        shell.run_line_magic("agent", "config colour=blue")
    with pytest.raises(UsageError, match="max_steps"):
        shell.run_line_magic("agent", "config max_steps=0")
    bot = ScriptedProvider(["ok"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "q")
    assert magics.manager.current.last_harness.max_steps == 4


def test_subcommands_print_useful_text(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider([{"text": "", "tool_calls": [{"name": "list_variables", "arguments": {}}]}, "done"])
    agent(shell, "--provider bot", "what is there?")
    capsys.readouterr()
    for command, needle in [
        ("status", "session: default"),
        ("history", "→ list_variables({})"),
        ("tools", "run_python       execute  ask"),
        ("cost", "turn 1: in"),
        ("log 50", "tool_call_end step 1  list_variables ok"),
        ("help", "%agent replay [TURN]"),
    ]:
        shell.run_line_magic("agent", command)
        assert needle in capsys.readouterr().out, command
    with pytest.raises(UsageError, match="unknown subcommand 'bogus'"):
        shell.run_line_magic("agent", "bogus")
    with pytest.raises(UsageError, match="N must be a positive number"):
        shell.run_line_magic("agent", "log x")


def test_replay_renders_the_same_turn(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["replayed answer text"])
    agent(shell, "--provider bot", "q")
    capsys.readouterr()
    shell.run_line_magic("agent", "replay 1")
    assert "replayed answer text" in capsys.readouterr().out
    with pytest.raises(UsageError, match="no turn '7'"):
        shell.run_line_magic("agent", "replay 7")


def test_allow_and_deny_overrides(shell):
    shell.user_ns["bot"] = ScriptedProvider([{"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": "y = 2"}}]}, "ok"])
    shell.run_line_magic("agent", "allow run_python")
    agent(shell, "--provider bot", "set y")
    assert shell.user_ns["y"] == 2
    shell.user_ns["bot"] = ScriptedProvider([{"text": "", "tool_calls": [{"name": "list_variables", "arguments": {}}]}, "ok"])
    shell.run_line_magic("agent", "deny list_variables")
    agent(shell, "--provider bot --permission auto", "list")
    assert shell.user_ns["_agent"].tool_calls[0].status == "denied"


def test_ask_mode_without_stdin_denies_and_model_hears_it(shell, monkeypatch):
    def no_stdin(prompt=""):
        raise EOFError("no stdin")

    monkeypatch.setattr("builtins.input", no_stdin)
    bot = ScriptedProvider([{"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": "z = 1"}}]}, "ok"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "set z")
    assert "z" not in shell.user_ns
    assert shell.user_ns["_agent"].tool_calls[0].status == "denied"


def test_ask_mode_approved_on_stdin(shell, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt="": "y")
    shell.user_ns["bot"] = ScriptedProvider([{"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": "z = 1"}}]}, "ok"])
    agent(shell, "--provider bot", "set z")
    assert shell.user_ns["z"] == 1


class _CtrlC:
    name = "fake"
    model = "fake"

    def generate(self, messages, tools, **kw):
        raise KeyboardInterrupt

    def generate_stream(self, messages, tools, **kw):
        yield StreamEvent(type="text", text="half an ans")
        raise KeyboardInterrupt


def test_interrupt_mid_stream_then_next_cell_works(shell, capsys):
    shell.user_ns["ctrlc"] = _CtrlC()
    with pytest.raises(AgentTurnFailed, match=r"\(interrupted\)"):  # AgentMagics.fail_on: Run All stops here
        agent(shell, "--provider ctrlc", "long question")
    result = shell.user_ns["_agent"]
    assert result.status == "interrupted"
    magics = shell.magics_manager.registry["AgentMagics"]
    assert magics.manager.event_log.turns("default")[-1].status == "interrupted"
    bot = ScriptedProvider(["fine now"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "again")
    assert shell.user_ns["_agent"].text == "fine now"
    roles = [m["role"] for m in bot.calls[0]["messages"] if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"]


def test_user_tool_decorator(shell):
    import jupyter_brain

    @jupyter_brain.tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    try:
        shell.user_ns["bot"] = ScriptedProvider([{"text": "", "tool_calls": [{"name": "shout", "arguments": {"text": "hi"}}]}, "ok"])
        agent(shell, "--provider bot", "shout")
        assert shell.user_ns["_agent"].tool_calls[0].output == "HI"
        assert shout("x") == "X"
    finally:
        from jupyter_brain.magics import USER_TOOLS

        USER_TOOLS.pop("shout", None)


def test_load_ext_imports_no_sdk_widget_or_agent_core():
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'jupyter_brain')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai', 'anywidget', 'ipywidgets')"
        " or m.startswith('jupyter_brain.agent')))\n"
    )
    # The warm-up (test_warm_up.py) imports the agent core in the background: off here, so
    # what is checked is %load_ext's own imports.
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={**os.environ, "JUPYTER_BRAIN_WARM_UP": "0"})
    assert out.stdout.strip() == "[]"


def test_provider_variable_may_hold_a_provider_name(shell):
    shell.user_ns["model"] = "nosuch"
    with pytest.raises(UsageError, match="unknown provider 'nosuch'"):
        agent(shell, "--provider model", "hello")


def test_changing_data_dir_switches_event_log(shell, tmp_path):
    shell.user_ns["bot"] = ScriptedProvider(["a", "b"])
    agent(shell, "--provider bot", "first")
    other = tmp_path / "elsewhere"
    shell.run_line_magic("config", f"AgentMagics.data_dir = {str(other)!r}")
    agent(shell, "--provider bot", "second")
    magics = shell.magics_manager.registry["AgentMagics"]
    assert magics.manager.event_log.path == str(other / "events.sqlite")
    assert [t.user_message for t in magics.manager.event_log.turns("default")] == ["second"]


def test_turn_result_carries_system_prompt_and_reflection_trigger(shell):
    shell.user_ns["bot"] = ScriptedProvider([{"text": "", "tool_calls": [{"name": "inspect_variable", "arguments": {"name": "nope"}}]}, "ok"])
    agent(shell, "--provider bot --think low", "q")
    result = shell.user_ns["_agent"]
    assert "## Thinking Instructions" in result.system_prompt
    assert [r.trigger for r in result.reflections] == ["tool_error"]


def test_context_flags_compact_and_status_shows_usage(shell, capsys):
    filler = " ".join(f"row{i} revenue {i}" for i in range(150))
    steps = [{"text": f"step {i}", "tool_calls": [{"name": "run_python", "arguments": {"code": f"print('{filler}')"}}]}
             for i in range(8)]
    shell.user_ns["bot"] = ScriptedProvider([*steps, "done"])
    shell.run_line_magic("config", "AgentMagics.permission = 'auto'")
    agent(shell, "--provider bot --max-steps 12 --context-budget 3000 --compaction token_budget", "go")
    out = capsys.readouterr().out
    assert shell.user_ns["_agent"].status == "completed"
    assert "⇣ history compacted (token_budget)" in out
    shell.run_line_magic("agent", "status")
    status = capsys.readouterr().out
    assert "of the 3,000-token budget (model window 128,000)" in status
    assert "compacts (token_budget) at 2,550" in status
    assert "in the last turn" in status and "history now:" in status


def test_bad_context_flags_are_usage_errors(shell):
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    with pytest.raises(UsageError, match="compaction"):
        agent(shell, "--provider bot --compaction magic", "go")
    with pytest.raises(UsageError, match="context_budget"):
        agent(shell, "--provider bot --context-budget 10", "go")


def test_status_before_any_turn_reports_the_window(shell, capsys):
    shell.run_line_magic("agent", "status")
    assert "context: no request yet in this kernel" in capsys.readouterr().out


def test_max_tools_offers_only_the_most_relevant_tools(shell):
    bot = ScriptedProvider(["ok", "ok", "ok"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "Which files are in the data folder?")
    default = [t["name"] for t in bot.calls[0]["tools"]]
    shell.run_line_magic("config", "AgentMagics.max_tools = 0")  # every tool
    agent(shell, "--provider bot", "Which files are in the data folder? (all tools)")
    everything = {t["name"] for t in bot.calls[1]["tools"]}
    assert len(default) == 5 + 1 and default[-1] == "find_tools" and set(default[:-1]) < everything
    shell.run_line_magic("config", "AgentMagics.max_tools = 3")
    agent(shell, "--provider bot", "Which files are in the data folder? (3 tools)")
    offered = [t["name"] for t in bot.calls[2]["tools"]]
    assert len(everything) > 4 and len(offered) == 4 and offered[-1] == "find_tools"
    assert {"list_files", "run_python"} <= set(offered) and set(offered[:-1]) < everything


def test_thinking_phase_flag_and_trait(shell, capsys):
    bulk = " ".join(f"row_{i}={i * 31 % 997};" for i in range(120))
    steps = [{"text": f"step {i}", "tool_calls": [{"name": "run_python", "arguments": {"code": f"print('{bulk}')"}}]}
             for i in range(3)]
    shell.user_ns["bot"] = ScriptedProvider([*steps, "done"])
    shell.run_line_magic("config", "AgentMagics.permission = 'auto'")
    agent(shell, "--provider bot --thinking-phase token_budget", "go")
    result = shell.user_ns["_agent"]
    assert result.status == "completed" and result.thinking_phases == 3 and result.thinking_phase_calls == 0
    assert "thinking phase (token_budget)" in capsys.readouterr().out
    assert shell.user_ns["bot"].calls[-1]["messages"][-1]["content"].startswith("[Thinking]")
    # the flag alone means summary; the trait sets the kernel default
    shell.user_ns["bot"] = ScriptedProvider([*steps, "done"])
    agent(shell, "--provider bot --thinking-phase", "go")
    assert shell.user_ns["_agent"].thinking_phase_calls == 3
    capsys.readouterr()
    shell.run_line_magic("agent", "cost")
    assert "thinking phase: 3 calls" in capsys.readouterr().out
    shell.user_ns["bot"] = ScriptedProvider([*steps, "done"])
    shell.run_line_magic("config", "AgentMagics.thinking_phase = 'semantic'")
    agent(shell, "--provider bot", "go")
    assert shell.user_ns["_agent"].thinking_phases == 3
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    with pytest.raises(UsageError, match="thinking"):
        agent(shell, "--provider bot --thinking-phase magic", "go")


def test_a_module_named_like_a_provider_does_not_shadow_the_provider_name(shell, monkeypatch):
    """`import openai` in the notebook, then `--provider openai`: the provider, not the module."""
    import types

    shell.user_ns["openai"] = types.ModuleType("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UsageError) as info:
        agent(shell, "--provider openai", "hello")
    assert "is a module" not in str(info.value)
    assert "OPENAI_API_KEY" in str(info.value) or "OPENAI_BASE_URL" in str(info.value)
