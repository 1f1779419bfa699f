"""A ``%%agent`` cell whose answer came over two messages of one stream (Anthropic's tool
search; vercel/ai's recording ``recorded/anthropic/vercel-tool-search-bm25``, its function
call taken out so the answer ends the turn), in a real (in-process) IPython shell through
the real ``anthropic`` SDK: what the view streamed, ``_agent.text`` and the saved transcript
are one text, and the server's search is a row that says the server ran it."""

from __future__ import annotations

from jupyter_brain.providers.anthropic import AnthropicProvider
from tests.providers.replay import Body, ReplayServer
from tests.providers.test_anthropic_server_tools import BM25, as_body, message_texts, payloads, without_client_calls


def test_the_cell_streams_returns_and_saves_one_text(shell, capsys, tmp_path) -> None:
    from jupyter_brain.session import SessionManager

    stream = without_client_calls(payloads(BM25))
    first, last = message_texts(stream)
    with ReplayServer(anthropic=True) as server:
        server.push(Body(as_body(stream)))
        shell.user_ns["claude"] = AnthropicProvider("claude-recorded", api_key="sk-ant-replay",
                                                    base_url=server.url, max_retries=0)
        shell.run_cell_magic("agent", "--provider claude", "What's the weather in San Francisco?")
    result = shell.user_ns["_agent"]
    out = capsys.readouterr().out

    assert result.status == "completed" and result.text == first + last
    assert first in out and last in out  # the view streamed both messages' text
    assert "tool_search_tool_bm25" in out and "run by the provider's server (anthropic): found 1 tool: get_weather" in out
    manager = shell.magics_manager.registry["AgentMagics"].manager
    manager.event_log.flush()
    reopened = SessionManager(tmp_path / ".jupyter_brain")
    saved = reopened.use(manager.current.name).history
    reopened.event_log.close()
    assert [m["role"] for m in saved] == ["user", "assistant"] and saved[-1]["content"] == result.text
