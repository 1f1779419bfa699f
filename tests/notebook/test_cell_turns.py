"""A cell's turn, not a chat message (issue #24, section 1), in an in-process IPython.

Without a front-end's cell id the cell is known by its text; ``parent_header`` stands in
for JupyterLab's execute request where a test needs the cell id.
"""

from __future__ import annotations

import pytest

from jupyter_brain.providers.scripted import ScriptedProvider

# Re-runs call the model here: what they send is what is checked.
pytestmark = pytest.mark.usefixtures("live_reruns")


def agent(sh, line, cell):
    return sh.run_cell_magic("agent", line, cell)


def dialogue(call):
    """The user and assistant messages a request carried (the fresh layers left out)."""
    return [m["content"] for m in call["messages"] if m["role"] in ("user", "assistant")]


def magics_of(sh):
    return sh.magics_manager.registry["AgentMagics"]


def restart(sh):
    """What a new kernel on the same folder does: a new session manager."""
    magics = magics_of(sh)
    magics.manager.event_log.close()
    magics._manager = None


def test_a_cell_run_three_times_leaves_one_turn_in_what_is_sent(shell):
    bot = ScriptedProvider(["a1", "a2", "a3", "b"])
    shell.user_ns["bot"] = bot
    for _ in range(3):
        agent(shell, "--provider bot", "Which month dropped most?")
    agent(shell, "--provider bot", "And the next one?")
    assert [dialogue(c) for c in bot.calls[:3]] == [["Which month dropped most?"]] * 3  # each re-run starts clean
    assert dialogue(bot.calls[3]) == ["Which month dropped most?", "a3", "And the next one?"]
    session = magics_of(shell).manager.current
    assert len(session.turns()) == 4  # the log keeps every run


def test_append_keeps_the_earlier_turn(shell):
    bot = ScriptedProvider(["first answer", "second answer", "next"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "Ask me")
    agent(shell, "--provider bot --append", "Ask me")
    agent(shell, "--provider bot", "Go on")
    assert dialogue(bot.calls[1]) == ["Ask me", "first answer", "Ask me"]
    assert dialogue(bot.calls[2]) == ["Ask me", "first answer", "Ask me", "second answer", "Go on"]


def test_an_edited_cell_replaces_its_turn_by_cell_id(shell):
    bot = ScriptedProvider(["old", "new", "then"])
    shell.user_ns["bot"] = bot
    shell.parent_header = {"header": {"msg_id": "run-1"}, "metadata": {"cellId": "cell-a"}}
    agent(shell, "--provider bot", "Plot sales")
    shell.parent_header = {"header": {"msg_id": "run-2"}, "metadata": {"cellId": "cell-a"}}
    agent(shell, "--provider bot", "Plot sales by month")  # edited, same cell
    shell.parent_header = {"header": {"msg_id": "run-3"}, "metadata": {"cellId": "cell-b"}}
    agent(shell, "--provider bot", "Plot sales by month")  # the same text in another cell
    assert dialogue(bot.calls[1]) == ["Plot sales by month"]
    assert dialogue(bot.calls[2]) == ["Plot sales by month", "new", "Plot sales by month"]


def test_turns_of_one_execution_of_a_cell_do_not_replace_each_other(shell):
    bot = ScriptedProvider(["x", "y"])
    shell.user_ns["bot"] = bot
    shell.parent_header = {"header": {"msg_id": "run-1"}, "metadata": {"cellId": "loop-cell"}}
    for question in ("about x", "about y"):  # a loop calling the magic in one cell
        agent(shell, "--provider bot", question)
    assert dialogue(bot.calls[1]) == ["about x", "x", "about y"]


def test_log_keeps_the_replaced_turn_and_marks_it(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["one", "two"])
    agent(shell, "--provider bot", "Same question")
    agent(shell, "--provider bot", "Same question")
    capsys.readouterr()
    shell.run_line_magic("agent", "log 100")
    lines = capsys.readouterr().out.splitlines()
    starts = [line for line in lines if " turn_start " in line]
    assert len(starts) == 2 and "[replaced by" in starts[0] and "[replaced by" not in starts[1]
    shell.run_line_magic("agent", "history")
    history = capsys.readouterr().out
    assert history.count("Same question") == 1 and "two" in history and "one" not in history


def test_turn_n_counts_the_sessions_turns_across_reruns_and_kernels(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["a", "b", "c", "d"])
    agent(shell, "--provider bot", "Q1")
    agent(shell, "--provider bot", "Q1")
    agent(shell, "--provider bot", "Q2")
    out = capsys.readouterr().out
    assert [line.split(" · ")[0] for line in out.splitlines() if line.startswith("▶ Turn")] == [
        "▶ Turn 1", "▶ Turn 2", "▶ Turn 3"]
    session = magics_of(shell).manager.current.name
    restart(shell)
    shell.run_line_magic("agent", f"use {session}")
    agent(shell, "--provider bot", "Q3")
    assert "▶ Turn 4" in capsys.readouterr().out
    shell.run_line_magic("agent", "replay 2")
    assert "▶ Turn 2" in capsys.readouterr().out


def test_a_fresh_kernel_starts_a_fresh_session_and_resuming_is_announced(shell, capsys):
    bot = ScriptedProvider(["a1", "a2", "b1"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "first")
    agent(shell, "--provider bot", "second")
    assert magics_of(shell).manager.current.name == "default"
    restart(shell)
    capsys.readouterr()
    agent(shell, "--provider bot", "third")
    assert dialogue(bot.calls[2]) == ["third"]  # not the earlier run's history
    out = capsys.readouterr().out
    assert magics_of(shell).manager.current.name == "default-2"
    assert "new session default-2: this kernel does not continue earlier runs" in out
    shell.run_line_magic("agent", "use default")
    assert "continuing session default (2 turns from the event log)" in capsys.readouterr().out


def test_resume_by_session_flag_prints_the_notice_once(shell, capsys):
    shell.user_ns["bot"] = bot = ScriptedProvider(["a1", "b1", "c1"])
    agent(shell, "--provider bot --session work", "first")
    restart(shell)
    capsys.readouterr()
    agent(shell, "--provider bot --session work", "second")
    agent(shell, "--provider bot --session work", "third")
    out = capsys.readouterr().out
    assert out.count("continuing session work (1 turn from the event log)") == 1
    assert dialogue(bot.calls[1]) == ["first", "a1", "second"]


def test_the_session_is_named_after_the_notebook(shell, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/me/reports/Sales Q3.ipynb")
    shell.user_ns["bot"] = ScriptedProvider(["ok"])
    agent(shell, "--provider bot", "hello")
    assert magics_of(shell).manager.current.name == "Sales-Q3"


def test_cost_and_inspect_after_a_restart(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["a", "b"])
    agent(shell, "--provider bot", "Q1")
    agent(shell, "--provider bot", "Q2")
    capsys.readouterr()
    shell.run_line_magic("agent", "cost")
    before = capsys.readouterr().out
    session = magics_of(shell).manager.current.name
    restart(shell)
    shell.run_line_magic("agent", f"use {session}")
    capsys.readouterr()
    shell.run_line_magic("agent", "cost")
    after = capsys.readouterr().out
    assert after == before and "turn 1:" in after and "turn 2:" in after and "total: $" in after
    shell.run_line_magic("agent", "inspect 2")
    shown = capsys.readouterr().out
    assert "Request of turn" in shown and "Q1" in shown and "Q2" in shown


@pytest.mark.parametrize("flag", ["", "--append"])
def test_a_replaced_turn_leaves_the_stored_history_too(shell, flag, tmp_path):
    from jupyter_brain.session import SessionManager

    shell.user_ns["bot"] = ScriptedProvider(["one", "two"])
    agent(shell, "--provider bot", "Same")
    agent(shell, f"--provider bot {flag}", "Same")
    name = magics_of(shell).manager.current.name
    magics_of(shell).manager.event_log.flush()
    reopened = SessionManager(tmp_path / ".jupyter_brain")
    history = [m["content"] for m in reopened.use(name).history]
    reopened.event_log.close()
    assert history == (["Same", "one", "Same", "two"] if flag else ["Same", "two"])


def in_cell(sh, cell_id, question, line="--provider bot"):
    """Run ``question`` from the JupyterLab cell ``cell_id`` (a new execution each time)."""
    in_cell.runs = getattr(in_cell, "runs", 0) + 1
    sh.parent_header = {"header": {"msg_id": f"run-{in_cell.runs}"}, "metadata": {"cellId": cell_id}}
    return agent(sh, line, question)


def test_a_rerun_cell_takes_its_earlier_turns_place(shell, tmp_path):
    """Re-running cell 2 of 3 sends only what came before it, and keeps cell 3 after it:
    the history stays in the notebook's order, in memory and in the stored history."""
    from jupyter_brain.session import SessionManager

    bot = ScriptedProvider(["a1", "b1", "c1", "b2", "d1"])
    shell.user_ns["bot"] = bot
    for cell, question in (("c1", "Q1"), ("c2", "Q2"), ("c3", "Q3"), ("c2", "Q2 edited")):
        in_cell(shell, cell, question)
    assert dialogue(bot.calls[3]) == ["Q1", "a1", "Q2 edited"]  # not Q3's turn, asked after it
    in_cell(shell, "c4", "Q4")
    assert dialogue(bot.calls[4]) == ["Q1", "a1", "Q2 edited", "b2", "Q3", "c1", "Q4"]
    manager = magics_of(shell).manager
    manager.event_log.flush()
    reopened = SessionManager(tmp_path / ".jupyter_brain")
    stored = [m["content"] for m in reopened.use(manager.current.name).history]
    reopened.event_log.close()
    assert stored == ["Q1", "a1", "Q2 edited", "b2", "Q3", "c1", "Q4", "d1"]


def test_a_rerun_in_its_place_is_replaced_in_its_place_again(shell):
    """The turn ids of a history put back in order survive: the cell can be re-run again."""
    bot = ScriptedProvider(["a1", "b1", "a2", "a3", "c1"])
    shell.user_ns["bot"] = bot
    for cell, question in (("c1", "Q1"), ("c2", "Q2"), ("c1", "Q1"), ("c1", "Q1"), ("c3", "Q3")):
        in_cell(shell, cell, question)
    assert [dialogue(c) for c in bot.calls[2:4]] == [["Q1"], ["Q1"]]
    assert dialogue(bot.calls[4]) == ["Q1", "a3", "Q2", "b1", "Q3"]


def test_append_still_adds_the_turn_at_the_end(shell):
    bot = ScriptedProvider(["a1", "b1", "a2", "c1"])
    shell.user_ns["bot"] = bot
    for cell, line, question in (("c1", "", "Q1"), ("c2", "", "Q2"), ("c1", "--append", "Q1"), ("c3", "", "Q3")):
        in_cell(shell, cell, question, f"--provider bot {line}")
    assert dialogue(bot.calls[2]) == ["Q1", "a1", "Q2", "b1", "Q1"]
    assert dialogue(bot.calls[3]) == ["Q1", "a1", "Q2", "b1", "Q1", "a2", "Q3"]


def test_a_cell_known_by_its_text_asked_again_later_goes_at_the_end(shell):
    """Without a front-end's cell id, the same text further down is "ask again, after what
    came between" (notebooks/sessions.ipynb under nbconvert): its turn goes at the end."""
    bot = ScriptedProvider(["I don't know when it starts.", "Noted.", "July to September."])
    shell.user_ns["bot"] = bot
    for question in ("Which months make up Q3?", "Our year starts in April.", "Which months make up Q3?"):
        agent(shell, "--provider bot", question)
    assert dialogue(bot.calls[2]) == ["Our year starts in April.", "Noted.", "Which months make up Q3?"]
