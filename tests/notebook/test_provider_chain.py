"""``--provider anthropic,openai`` and ``AgentMagics.provider``: a chain from a cell.

The Anthropic SDK meets 529 answers of the mock server (after its own retries) and the
turn goes on with the OpenAI-compatible mock server; the text view says so in one line.
"""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from mock_servers import HttpError, MockAnthropic, MockOpenAI, Reply

SECRET = "sk-ant-chain-secret-123"


def agent(sh, line: str, cell: str):
    return sh.run_cell_magic("agent", line, cell)


@pytest.mark.parametrize(("line", "needle"), [
    ("--provider anthropic,nosuch", "unknown provider 'nosuch' in the chain 'anthropic,nosuch'"),
    ("--provider anthropic,", "names separated by commas"),
    ("--provider anthropic,openai", "no provider of the chain 'anthropic,openai' can be used"),
])
def test_bad_chains_are_usage_errors(shell, line: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        agent(shell, line, "hello")


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch):
    with MockAnthropic() as anthropic, MockOpenAI(models=["qwen3:4b"]) as openai:
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.url)
        monkeypatch.setenv("OPENAI_BASE_URL", openai.url + "/v1")
        fast = {"retry-after-ms": "10"}
        anthropic.push(*[HttpError(529, "Overloaded", headers=fast) for _ in range(3)])  # the SDK tries 3 times
        openai.push(Reply(text="Answered locally."))
        yield anthropic, openai


def test_a_chain_flag_falls_back_and_the_view_says_so(shell, servers, capsys) -> None:
    anthropic, openai = servers
    agent(shell, "--provider anthropic,openai:qwen3:4b --model claude-haiku-4-5 --out res", "Hi?")
    res = shell.user_ns["res"]
    assert res.status == "completed" and res.text == "Answered locally."
    assert res.providers_used == ["openai:qwen3:4b"]
    assert anthropic.bodies("/v1/messages")[0]["model"] == "claude-haiku-4-5"  # --model: the first member's
    assert openai.bodies("/chat/completions")[0]["model"] == "qwen3:4b"
    out = capsys.readouterr().out
    assert "anthropic:claude-haiku-4-5 failed (overloaded) — continued with openai:qwen3:4b" in out
    assert SECRET not in out


def test_the_provider_trait_takes_a_chain(shell, servers, capsys) -> None:
    shell.run_line_magic("config", 'AgentMagics.provider = "anthropic,openai:qwen3:4b"')
    agent(shell, "--out res", "Hi?")
    assert shell.user_ns["res"].providers_used == ["openai:qwen3:4b"]
    assert "continued with openai:qwen3:4b" in capsys.readouterr().out
