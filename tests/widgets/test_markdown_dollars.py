"""Dollar amounts in the Markdown that JupyterLab renders stay dollar amounts: it typesets
``$…$`` as LaTeX even after the CommonMark escape ``\\$``, so the transcript's bundle writes
``<span>&#36;</span>`` outside code, which a Markdown export shows as ``$`` too (the browser
check is in tests/browser/test_agent_view_in_lab.py, the export's in
tests/notebook/test_saved_size.py)."""

from __future__ import annotations

from jupyter_brain.agent.events import StepEnd, StepStart, TextDelta, TurnEnd, TurnStart
from jupyter_brain.widgets import AgentView
from jupyter_brain.widgets._format import escape_dollars

ESC = "<span>&#36;</span>"  # no "$" for JupyterLab's math step, an element that ends MathJax's text


def test_dollars_outside_code_are_escaped_and_code_is_left_alone():
    md = "\n".join([
        "Revenue fell from $57,100 to $44,900 (`df['$col']`, ``a ` $b``).",
        "Escaped once \\$5, twice \\\\$6.",
        "```python",
        'print(f"${x:,.0f}")',
        "```",
        "~~~",
        "$ not math $",
        "~~~",
        "<details><summary>3 steps · $0.01</summary>",
        "Cost $0.0000",
    ])
    assert escape_dollars(md).split("\n") == [
        f"Revenue fell from {ESC}57,100 to {ESC}44,900 (`df['$col']`, ``a ` $b``).",
        "Escaped once <span>&#36;</span>5, twice \\\\$6.",  # an old-style \\$ is left as written
        "```python",
        'print(f"${x:,.0f}")',
        "```",
        "~~~",
        "$ not math $",
        "~~~",
        "<details><summary>3 steps · $0.01</summary>",
        f"Cost {ESC}0.0000",
    ]
    assert escape_dollars("no dollars here") == "no dollars here"
    assert escape_dollars(escape_dollars(md)) == escape_dollars(md)  # once is enough


def test_an_unclosed_fence_keeps_the_rest_as_code():
    assert escape_dollars("```\n$a$\n") == "```\n$a$\n"


def test_the_agent_views_markdown_bundle_shows_amounts_not_math():
    view = AgentView()
    answer = "July fell from $57,100 to $44,900."
    for e in [TurnStart(user_message="Which month?", session_id="s", turn_id="t"), StepStart(step=1),
              TextDelta(step=1, text=answer), StepEnd(step=1),
              TurnEnd(status="completed", text=answer, steps=1, cost_usd=0.0)]:
        view.handle(e)
    data, _ = view._repr_mimebundle_()
    assert f"from {ESC}57,100 to {ESC}44,900." in data["text/markdown"]
    assert "from $57,100 to $44,900." in view.to_markdown()  # the transcript itself is unchanged
    view.close()
