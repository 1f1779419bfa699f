"""notebooks/demo_models: the example notebooks' stand-in models are scripted offline and
"auto" (the real model, as ``--provider auto`` resolves it) once a key or a server is set."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jupyter_brain import ScriptedProvider

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "notebooks"))
import demo_models

KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL")
MODELS = ["quickstart_model", "strategy_model", "comparison_model", "reflection_model", "thinking_model",
          "fiscal_model", "dataframe_model", "bounded_context_model", "mcp_model", "safety_model"]


@pytest.fixture
def offline(monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize("name", MODELS)
def test_offline_every_model_is_scripted(offline, name):
    assert isinstance(getattr(demo_models, name)(), ScriptedProvider)
    assert not demo_models.live()


@pytest.mark.parametrize("key", ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"])
@pytest.mark.parametrize("name", MODELS[:4])
def test_with_a_key_or_a_server_the_notebooks_use_the_real_model(offline, monkeypatch, key, name):
    monkeypatch.setenv(key, "http://localhost:11434/v1" if key.endswith("URL") else "placeholder")
    assert demo_models.live()
    assert getattr(demo_models, name)() == "auto"


def test_each_call_is_a_fresh_script(offline):
    """Two calls give two models, each with every script from its start."""
    assert demo_models.strategy_model() is not demo_models.strategy_model()


def test_demo_setup_makes_every_request_the_same_on_any_machine(shell, monkeypatch, tmp_path):
    """The notebooks' setup: a request does not change when a file appears beside the
    notebook or the Python version is another one; the workspace lists notebooks/data."""
    import platform

    bot = ScriptedProvider(["ok", "ok"])
    shell.user_ns["bot"] = bot
    demo_models.demo_setup()
    shell.run_cell_magic("agent", "--provider bot", "hi")
    (tmp_path / "added_beside_the_notebook.txt").write_text("new", encoding="utf-8")  # the working directory
    monkeypatch.setattr(platform, "python_version", lambda: "3.99.123")
    shell.run_cell_magic("agent", "--provider bot --new", "hi")
    first, second = (call["messages"] for call in bot.calls)
    assert first == second
    kinds = {m["kind"]: m["content"] for m in first if m.get("kind")}
    assert kinds["runtime"] == "Runtime: you are answering as scripted via scripted."
    assert "data/ — " in kinds["workspace"] and "sales_2024.csv" in kinds["workspace"]
    assert "added_beside_the_notebook" not in kinds["workspace"]
    magics = shell.magics_manager.registry["AgentMagics"]
    assert Path(magics.data_dir).name.startswith("jupyter-brain-")


def test_demo_setup_makes_the_model_the_kernels_default(shell, offline):
    """``demo_setup(model)``: the agent cells need no --provider; the model's variable is
    private, so the workspace the agent sees does not list it."""
    bot = ScriptedProvider(["the default answered"])
    demo_models.demo_setup(bot)
    shell.run_cell_magic("agent", "", "hi")
    result = shell.user_ns["_agent"]
    assert (result.status, result.text) == ("completed", "the default answered")
    assert shell.magics_manager.registry["AgentMagics"].provider == demo_models.DEFAULT_PROVIDER
    workspace = next(m["content"] for m in bot.calls[0]["messages"] if m.get("kind") == "workspace")
    assert "## Variables" in workspace and demo_models.DEFAULT_PROVIDER not in workspace


def _ask(model, prompt, flags=""):
    from jupyter_brain.providers.base import ProviderError

    system = "You are jupyter-brain." + flags
    try:
        return model.generate([{"role": "system", "content": system}, {"role": "user", "content": prompt}], []).text
    except ProviderError as exc:
        return f"error: {exc}"


def test_one_model_answers_each_section_from_its_own_script(offline):
    """The section is picked by the turn's prompt (or by what a flag wrote in the system
    prompt); a new turn starts that section's script from the top, so a re-run repeats it."""
    model = demo_models.comparison_model()
    followup = _ask(model, "Which month had the largest revenue drop in `sales`? One sentence.")
    assert "Final Answer: **July** had the largest revenue drop" in followup
    assert _ask(model, "Which month had the largest revenue drop in `sales`? One sentence.") == followup
    cot = _ask(model, "Which month had the largest revenue drop in `sales`?", "\n# CHAIN OF THOUGHT FRAMEWORK")
    assert cot.startswith("Step 1:")
    assert "no reply for 'What is the meaning of life?'" in _ask(model, "What is the meaning of life?")


def test_a_reflection_goes_to_the_script_of_its_turn(offline):
    section = demo_models.Section(lambda: ScriptedProvider(["main"], reflections=["reflected"]), prompt="^hi")
    model = demo_models.ScriptedByPrompt({"only": section})
    assert _ask(model, "hi there") == "main"
    reflection = [{"role": "system", "kind": "reflection", "content": "reflect"}, {"role": "user", "content": "Task"}]
    assert model.generate(reflection, []).text == "reflected"
    assert model.clone() is not model and isinstance(model.clone(), demo_models.ScriptedByPrompt)


def test_the_eval_notebooks_closing_answer_is_prose_and_its_listing_ends_at_a_word(offline):
    """#40: the closing %%agent cell of evals.ipynb runs without a strategy: no "Final Answer:"
    label, and the code it runs shortens each reason at a word, with an ellipsis."""
    import textwrap

    model = demo_models.eval_model()
    question = "Which runs of `results` failed, and why? Be brief."
    messages = [{"role": "system", "content": "You are jupyter-brain."}, {"role": "user", "content": question}]
    first = model.generate(messages, [])
    (call,) = first.tool_calls
    assert "Thought:" not in first.text and "shorten(r.reason, 70, placeholder=" in call.arguments["code"]
    reason = "check: (people.age_group == 'senior').sum() == (people.age >= 60).sum() is np.False_"
    assert textwrap.shorten(reason, 70, placeholder=" …").endswith("(people.age >= …")
    messages += [{"role": "assistant", "content": first.text},
                 {"role": "tool", "content": "age-groups × react: check: … …", "tool_call_id": "c1"}]
    answer = model.generate(messages, []).text
    assert answer.startswith("Chain-of-thought fails every task") and "Final Answer" not in answer
