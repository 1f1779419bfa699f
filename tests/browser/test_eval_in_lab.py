"""Issue #27 in real JupyterLab: ``%agent eval`` shows a progress bar that counts the runs while
their rows stream into a table, then the success rates, the success-rate-vs-cost plot (a real
image) and the failures by task; the cell's value is the DataFrame."""

from __future__ import annotations

import pytest

from .conftest import open_and_run, record_states, screenshot, wait_idle_after_run, wait_layout_stable, write_notebook

pytestmark = pytest.mark.browser

SETUP = '''%load_ext jupyter_brain
import tempfile
_tmp = tempfile.TemporaryDirectory()
%config AgentMagics.data_dir = _tmp.name
from jupyter_brain import ScriptedProvider

open("tasks.yaml", "w").write("""
configs:
  - {name: careful, strategy: react, provider: careful}
  - {name: hasty, strategy: none, provider: hasty}
tasks:
  - {id: sum, prompt: "What is 2 + 3?", expect: "5"}
  - {id: product, prompt: "What is 6 times 7?", expect: "42"}
  - {id: square, prompt: "What is 9 squared?", expect: "81"}
""")
RIGHT = {"2 + 3": "5", "6 times 7": "42", "9 squared": "81"}

def answer(wrong):
    """The right number; ``wrong``: one more, except for the sum."""
    def reply(messages, tools):
        prompt = [m["content"] for m in messages if m.get("role") == "user"][-1]
        value = next(v for k, v in RIGHT.items() if k in prompt)
        return f"Final Answer: {int(value) + 1 if wrong and '2 + 3' not in prompt else value}"
    return reply

careful = ScriptedProvider([answer(False)], repeat=True, delay_s=0.05)
hasty = ScriptedProvider([answer(True)], repeat=True, delay_s=0.05)
'''

EVAL = "%agent eval tasks.yaml --runs 2"

STATE = "el => [el.querySelector('progress') ? el.querySelector('progress').value : -1, el.querySelectorAll('tr').length]"


def test_eval_shows_progress_streaming_rows_rates_and_the_plot(lab, page):
    base, root = lab
    record_states(page, ".jb-eval", STATE)
    write_notebook(root, "eval_progress.ipynb", [SETUP, EVAL])
    open_and_run(page, base, "eval_progress.ipynb")
    wait_idle_after_run(page)
    output = page.locator(".jp-Cell").nth(1)
    progress = output.locator(".jb-eval progress").first
    progress.wait_for()
    assert (progress.get_attribute("value"), progress.get_attribute("max")) == ("12", "12")
    assert "12/12 runs · finished" in output.locator(".jb-eval").first.inner_text()

    # The progress display counted the runs one by one while rows streamed into its table.
    states = page.evaluate("() => window.__jbStates")
    counts = [s[0] for s in states]
    assert counts[-1] == 12 and any(0 < c < 12 for c in counts), states
    assert counts == sorted(counts), states  # never backwards
    rows = [s[1] for s in states]
    assert any(1 < r < 13 for r in rows), states  # the table grew with the runs

    summary = output.locator(".jb-eval").first  # the rates first, where the progress was (#40)
    text = summary.inner_text()
    assert "careful" in text and "6/6 · 100 % (61–100 %)" in text
    assert "hasty" in text and "2/6 · 33 % (10–70 %)" in text
    figure = output.locator(".jp-RenderedImage img").first
    figure.wait_for()
    size = figure.evaluate("img => [img.naturalWidth, img.naturalHeight, img.complete]")
    assert size[0] > 300 and size[1] > 200 and size[2], size
    failures = output.locator(".jb-eval").nth(1).inner_text()
    assert "product" in failures and "expected '42'" in failures and "the answer's numbers: 43" in failures
    shown = "".join(output.locator(".jb-eval").all_inner_texts())
    assert shown.count("the answer's numbers: 43") == 2  # each failed run's reason once (2 runs)
    assert not output.locator(".jb-eval details").first.evaluate("d => d.open")  # every run: folded
    assert output.locator(".jp-OutputArea-executeResult table.dataframe").count() == 1  # the DataFrame
    wait_layout_stable(page, ".jp-Cell")
    figure.scroll_into_view_if_needed()
    screenshot(page, "eval_rates_and_plot")
    output.locator(".jb-eval").first.scroll_into_view_if_needed()
    screenshot(page, "eval_summary_finished")
