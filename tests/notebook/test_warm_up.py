"""The warm-up at ``%load_ext`` (``notebook/warm_up.py``): a first turn finds the agent
core imported, the tokenizer loaded and the built-in tools' models built (and numpy, which
tool selection's BM25 no longer needs, loaded by neither); ``%load_ext``
itself still returns at once, and a failing warm-up changes nothing."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap

from jupyter_brain.notebook import warm_up

PROBE = textwrap.dedent("""
    import json, sys
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_brain")
    at_load = sorted(m for m in sys.modules if m.startswith("jupyter_brain.agent.harness"))
    from jupyter_brain.notebook import warm_up
    finished = warm_up.wait(120)
    from jupyter_brain.agent import tool_models
    from jupyter_brain.foundation import tokens
    models = len(tool_models._models)
    from jupyter_brain.providers.scripted import ScriptedProvider
    shell.user_ns["bot"] = ScriptedProvider(["March."])
    shell.run_cell_magic("agent", "--provider bot", "Which month?")
    print(json.dumps({
        "finished": finished,
        "tokenizer": tokens._encoding is not None,
        "models_before_turn": models,
        "models_built_by_turn": len(tool_models._models) - models,
        "numpy_after_turn": sorted(m for m in ("numpy", "bm25s") if m in sys.modules),
        "sdks": sorted(m for m in sys.modules if m.split(".")[0] in ("anthropic", "openai", "mcp")),
        "answer": shell.user_ns["_agent"].text,
    }))
""")


def probe(tmp_path, **env):
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env={**os.environ, **env})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_first_turn_builds_no_tool_model_after_the_warm_up(tmp_path):
    seen = probe(tmp_path, JUPYTER_BRAIN_WARM_UP="1")
    assert seen["finished"] and seen["tokenizer"] and seen["answer"] == "March."
    assert seen["models_before_turn"] >= 8  # every built-in tool's argument model
    assert seen["models_built_by_turn"] == 0
    # tool selection (on by default) ranks a turn's tools without bm25s, so neither the
    # warm-up nor the turn loads numpy (120-230 ms, and a race with the user's `import pandas`)
    assert seen["numpy_after_turn"] == []
    assert seen["sdks"] == []  # no provider SDK and no MCP: those load when a turn needs them


def test_the_configured_providers_sdk_is_imported_by_the_warm_up(tmp_path):
    env = {k: "" for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "JUPYTER_BRAIN_BASE_URL")}
    seen = probe(tmp_path, JUPYTER_BRAIN_WARM_UP="1", OPENAI_BASE_URL="http://127.0.0.1:9/v1", **env)
    assert seen["finished"] and "openai" in seen["sdks"] and "anthropic" not in seen["sdks"]


def test_turned_off_the_first_turn_does_the_work(tmp_path):
    seen = probe(tmp_path, JUPYTER_BRAIN_WARM_UP="0")
    assert not seen["finished"] and seen["models_before_turn"] == 0
    assert seen["models_built_by_turn"] >= 8 and seen["answer"] == "March."


def test_a_failing_warm_up_is_logged_and_lets_waiters_go(monkeypatch, caplog):
    done = warm_up.threading.Event()
    monkeypatch.setattr(warm_up, "_done", done)
    monkeypatch.setattr(warm_up, "MODULES", ("jupyter_brain.no_such_module",))
    with caplog.at_level("DEBUG", logger="jupyter_brain.warm_up"):
        warm_up._run()
    assert done.is_set() and "warm-up stopped" in caplog.text


def test_waiting_for_a_warm_up_that_never_started_returns_at_once(monkeypatch):
    """Turned off (or not yet started), nothing would end the wait: it returns False at once
    instead of sitting out its timeout (or, without one, forever)."""
    monkeypatch.setattr(warm_up, "_thread", None)
    monkeypatch.setattr(warm_up, "_done", warm_up.threading.Event())
    answers: list[bool] = []
    waiter = warm_up.threading.Thread(target=lambda: answers.append(warm_up.wait()), daemon=True)
    waiter.start()
    waiter.join(60)  # a bound on a broken wait only; a working one returns at once
    assert answers == [False]


def test_a_first_turns_first_word_waits_for_no_eval_machinery():
    """``remember_turn`` (``to_test()``) loads the eval package after the turn (#40)."""
    code = ("import sys, jupyter_brain.notebook.agent_cell, jupyter_brain.notebook.views, jupyter_brain.session\n"
            "print(sorted(m for m in sys.modules if m.startswith(('jupyter_brain.evals', 'jupyter_brain.notebook.turn_export'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


GC_PROBE = textwrap.dedent("""
    import gc
    _before = [s["collections"] for s in gc.get_stats()]
    MADE = [[i] for i in range(100_000)]  # as an import does: many container objects
    COLLECTIONS = sum(s["collections"] for s in gc.get_stats()) - sum(_before)
    ENABLED_DURING = gc.isenabled()
""")


def warm_up_importing(monkeypatch, tmp_path, module: str):
    """Run the warm-up in this thread with ``module`` (written from GC_PROBE) as its only import."""
    (tmp_path / f"{module}.py").write_text(GC_PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(warm_up, "MODULES", (module,))
    monkeypatch.setattr(warm_up, "LATER_MODULES", ())
    monkeypatch.setattr(warm_up, "_configured_sdk", lambda: None)
    warm_up.warm_up()
    return sys.modules.pop(module)


def test_the_warm_ups_imports_run_with_the_collector_paused_and_leave_it_as_it_was(monkeypatch, tmp_path):
    """100,000 new objects set off about 140 young collections; under the warm-up, none. After
    it, the collector is on and nothing stays frozen (a full collection sees every object)."""
    assert gc_is_plain()
    probe = warm_up_importing(monkeypatch, tmp_path, "jb_gc_probe_paused")
    assert probe.ENABLED_DURING is False and probe.COLLECTIONS == 0
    assert gc_is_plain()
    # The same import outside the warm-up does collect: the probe can see collections.
    (tmp_path / "jb_gc_probe_plain.py").write_text(GC_PROBE)
    import importlib

    plain = importlib.import_module("jb_gc_probe_plain")
    sys.modules.pop("jb_gc_probe_plain")
    assert plain.ENABLED_DURING is True and plain.COLLECTIONS > 0


def test_a_collector_the_process_turned_off_or_froze_is_left_alone(monkeypatch, tmp_path):
    gc.disable()
    try:
        warm_up_importing(monkeypatch, tmp_path, "jb_gc_probe_off")
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
    gc.freeze()
    try:
        probe = warm_up_importing(monkeypatch, tmp_path, "jb_gc_probe_frozen")
        assert probe.ENABLED_DURING is True  # not paused: the process manages its collector
        assert gc.isenabled() and gc.get_freeze_count() > 0  # its frozen objects not unfrozen by the warm-up
    finally:
        gc.unfreeze()


def gc_is_plain() -> bool:
    return gc.isenabled() and gc.get_freeze_count() == 0
