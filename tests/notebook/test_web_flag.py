"""``--web on|off``, ``AgentMagics.web`` and ``@jupyter_brain.web_search`` in a real
(in-process) IPython shell with the scripted provider."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

import jupyter_brain
from jupyter_brain.agent.turn_options import WEB_MODES
from jupyter_brain.agent.web import NO_WEB_SEARCH
from jupyter_brain.notebook.web_search import registered_web_search
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.settings import WEB_CHOICES

PAGE = {"url": "https://docs.example/pandas-merge", "title": "pandas merge", "snippet": "how=left keeps all rows",
        "content": "<p>Use <code>how='left'</code> to keep every row.</p><script>evil()</script>"}


def agent(sh: Any, line: str, cell: str) -> Any:
    return sh.run_cell_magic("agent", line, cell)


def offered(call: dict[str, Any]) -> list[str]:
    return [t["name"] for t in call["tools"]]


@pytest.fixture(autouse=True)
def no_registered_search() -> Iterator[None]:
    jupyter_brain.web_search(None)
    yield
    jupyter_brain.web_search(None)


def test_web_on_offers_the_registered_search_and_saves_its_pages(shell, capsys) -> None:
    queries: list[str] = []

    @jupyter_brain.web_search
    def search(query: str) -> list[dict[str, str]]:
        queries.append(query)
        return [PAGE]

    assert registered_web_search() is search and callable(search)  # returned unchanged
    bot = ScriptedProvider([
        {"text": "", "tool_calls": [{"id": "c1", "name": "web_search", "arguments": {"query": "pandas left join"}}]},
        "Use how='left' (https://docs.example/pandas-merge).",
    ])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot --web on", "How do I keep all rows in a merge?")
    result = shell.user_ns["_agent"]

    assert queries == ["pandas left join"] and "web_search" in offered(bot.calls[0])
    assert result.web_citations == [{"url": PAGE["url"], "title": "pandas merge"}]
    [page] = [Path(p) for p in result.rendered_content_paths]
    assert page.is_absolute() and page.parent == Path(".jupyter_brain/artifacts/web").resolve()
    text = page.read_text(encoding="utf-8")
    assert "keep every row" in text and "evil()" not in text and "<code>" not in text
    out = capsys.readouterr().out
    assert "⚙ web_search" in out and "pandas left join" in out and "[1] pandas merge" in out


def test_web_off_or_no_flag_offers_no_search(shell) -> None:
    jupyter_brain.web_search(lambda q: [PAGE])
    bot = ScriptedProvider(["a", "b", "c"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "q")
    agent(shell, "--provider bot --web off", "q")
    shell.run_line_magic("config", 'AgentMagics.web = "on"')
    agent(shell, "--provider bot", "q")
    assert ["web_search" in offered(c) for c in bot.calls] == [False, False, True]


def test_web_on_without_a_search_says_so_once_and_answers(shell, capsys) -> None:
    bot = ScriptedProvider(["From what I know: 42."])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot --web on", "q")
    assert shell.user_ns["_agent"].text == "From what I know: 42."
    out = capsys.readouterr().out
    assert out.count(NO_WEB_SEARCH) == 1
    assert "web_search" not in offered(bot.calls[0])


def test_a_bad_web_value_is_a_usage_error(shell) -> None:
    shell.user_ns["bot"] = ScriptedProvider(["x"])
    with pytest.raises(UsageError) as info:
        agent(shell, "--provider bot --web maybe", "q")
    assert "on" in str(info.value) and "off" in str(info.value)


def test_registering_something_not_callable_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="takes a query and returns results"):
        jupyter_brain.web_search("https://search.example")


def test_the_setting_choices_are_the_agents_web_modes() -> None:
    assert set(WEB_CHOICES) == set(WEB_MODES)
