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
MODELS = [
    ("quickstart_model", ()), ("strategy_model", ("react",)), ("strategy_model", ("tot",)),
    ("comparison_models", ()), ("comparison_followup_model", ()), ("reflection_model", ("periodic",)),
    ("reflection_model", ("think_off",)), ("thinking_model", ("high",)), ("fiscal_model", ()),
    ("dataframe_model", ("own_tool",)), ("bounded_context_model", ()), ("mcp_model", ()), ("safety_model", ()),
]


@pytest.fixture
def offline(monkeypatch):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize(("name", "args"), MODELS)
def test_offline_every_model_is_scripted(offline, name, args):
    model = getattr(demo_models, name)(*args)
    providers = list(model.values()) if isinstance(model, dict) else [model]
    assert providers and all(isinstance(p, ScriptedProvider) for p in providers)
    assert not demo_models.live()


@pytest.mark.parametrize("key", ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"])
@pytest.mark.parametrize(("name", "args"), MODELS[:4])
def test_with_a_key_or_a_server_the_notebooks_use_the_real_model(offline, monkeypatch, key, name, args):
    monkeypatch.setenv(key, "http://localhost:11434/v1" if key.endswith("URL") else "placeholder")
    assert demo_models.live()
    assert getattr(demo_models, name)(*args) == "auto"


def test_each_call_is_a_fresh_script(offline):
    """Two cells asking for a model get two scripts, each replaying from its start."""
    assert demo_models.strategy_model("cot") is not demo_models.strategy_model("cot")
    with pytest.raises(KeyError):
        demo_models.strategy_model("unknown")


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
