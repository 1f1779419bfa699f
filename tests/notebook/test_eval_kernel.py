"""``%agent eval`` in a real kernel (#27): nbclient runs it with a scripted model and no key;
the saved outputs are the finished progress display (with every run's recording), the
success-rate table, the rate-vs-cost figure as a PNG, the failures, and the DataFrame."""

from __future__ import annotations

import pytest

from ..kernel_notebooks import drop_keys, execute, load_extension

TASKS = """
configs:
  - {name: good, strategy: react, provider: bot}
  - {name: bad, strategy: react, provider: badbot}
tasks:
  - id: mean
    setup: |
      import pandas as pd
      sales = pd.DataFrame({"units": [3, 5, 7]})
    prompt: What is the mean of sales.units?
    expect: "5"
  - id: total
    setup: |
      import pandas as pd
      sales = pd.DataFrame({"units": [3, 5, 7]})
    prompt: Store the total of sales.units in `total`.
    check: total == 15
"""


@pytest.mark.kernel
def test_in_a_real_kernel_the_eval_shows_progress_rates_the_plot_and_returns_a_dataframe(tmp_path, monkeypatch):
    import nbformat

    drop_keys(monkeypatch)
    (tmp_path / "tasks.yaml").write_text(TASKS, encoding="utf-8")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            load_extension(tmp_path / 'jb') +
            "from jupyter_brain import ScriptedProvider\n"
            "kept = [1, 2]\n"
            "def answer(messages, tools, wrong=False):\n"
            "    prompt = [m['content'] for m in messages if m.get('role') == 'user'][-1]\n"
            "    if 'mean' in prompt:\n"
            "        return 'Final Answer: 4' if wrong else 'Final Answer: 5'\n"
            "    if any(m.get('role') == 'tool' for m in messages):\n"
            "        return 'Final Answer: stored.'\n"
            "    return {'text': 'Action: run_python', 'tool_calls': [{'name': 'run_python', "
            "'arguments': {'code': 'total = int(sales.units.sum())'}}]}\n"
            "bot = ScriptedProvider([answer], repeat=True)\n"
            "badbot = ScriptedProvider([lambda m, t: answer(m, t, wrong=True)], repeat=True)"),
        nbformat.v4.new_code_cell("%agent eval tasks.yaml"),
        nbformat.v4.new_code_cell("print(_eval.passed.tolist(), 'total' in dir(), kept)"),
    ]
    execute(nb, tmp_path, timeout=180)
    outputs = nb.cells[1].outputs
    displays = [o for o in outputs if o.output_type == "display_data"]
    # In reading order (#40): the rates (where the progress was), the figure, the failures, every run folded.
    summary, figure, failures, runs = displays
    assert "4/4 runs · finished" in summary.data["text/html"] and "<progress value='4' max='4'>" in \
        summary.data["text/html"]
    assert summary.data["text/plain"].startswith("eval tasks.yaml: 4/4 runs [####################] finished\n")
    assert len(summary.metadata["jupyter_brain"]["recordings"]) == 4  # each run replays next time
    assert "good: 2/2 · 100 % (34–100 %)" in summary.data["text/plain"]
    assert "bad: 1/2 · 50 % (9–91 %)" in summary.data["text/plain"]
    assert figure.data["image/png"]  # the success-rate-vs-cost plot, a real figure
    assert "mean:\n  bad #1: expect: expected '5' (±0.5); the answer's numbers: 4" in failures.data["text/plain"]
    assert "<details><summary>every run (4)" in runs.data["text/html"]
    everything = "".join(str(o.get("data", {}).get("text/html", "")) for o in displays)
    assert everything.count("the answer&#x27;s numbers: 4") == 1  # each failure's reason once
    (result,) = [o for o in outputs if o.output_type == "execute_result"]
    assert "text/html" in result.data and "passed" in result.data["text/plain"]  # the DataFrame
    assert nb.cells[2].outputs[0].text.strip() == "[True, False, True, True] False [1, 2]"
