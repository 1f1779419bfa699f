"""A provider named by ``--provider`` is kept across cells (notebook/provider_cache.py): one
provider object, one HTTP client, one TCP connection; a changed setting builds a new one."""

from __future__ import annotations

from typing import Any

from jupyter_brain.notebook.provider_cache import ProviderCache, environment_fingerprint
from tests.mock_servers import MockOpenAI, Reply


def live_provider(shell: Any) -> Any:
    """The live provider the last cell's turn ran on (under the cell's ReplayingProvider)."""
    harness = shell.magics_manager.registry["AgentMagics"].manager.current.last_harness
    return harness.provider.live


def test_two_cells_use_one_provider_one_client_and_one_connection(live_reruns, monkeypatch):
    shell = live_reruns
    cache = shell.magics_manager.registry["AgentMagics"].provider_cache
    with MockOpenAI(models=["local-model"]) as server:
        server.push(Reply(text="First answer."), Reply(text="Second answer."), Reply(text="Third answer."))
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")  # a keyless local server
        shell.run_cell_magic("agent", "", "first question")  # auto
        first = live_provider(shell)
        shell.run_cell_magic("agent", "--provider openai", "second question")  # what auto picked
        second = live_provider(shell)
        shell.run_cell_magic("agent", "", "third question")
        assert shell.user_ns["_agent"].text == "Third answer."
        assert live_provider(shell) is first and second is first
        assert first._client is second._client
        assert cache.built == 1
        assert len(set(server.peers)) == 1, server.peers  # one TCP connection for all requests
        assert [r.path for r in server.requests].count("/v1/models") == 1
        assert [r.path for r in server.requests].count("/v1/chat/completions") == 3


def test_a_changed_setting_builds_a_new_provider_and_closes_the_old_one(live_reruns, monkeypatch):
    shell = live_reruns
    with MockOpenAI(models=["a-model"]) as one, MockOpenAI(models=["b-model"]) as two:
        one.push(Reply(text="from one"))
        two.push(Reply(text="from two"))
        monkeypatch.setenv("OPENAI_BASE_URL", one.url + "/v1")
        shell.run_cell_magic("agent", "", "which server?")
        old = live_provider(shell)
        monkeypatch.setenv("OPENAI_BASE_URL", two.url + "/v1")
        shell.run_cell_magic("agent", "", "and now?")
        new = live_provider(shell)
        assert shell.user_ns["_agent"].text == "from two"
        assert new is not old and new.model == "b-model"
        assert old._client.is_closed() and not new._client.is_closed()
        shell.run_line_magic("unload_ext", "jupyter_brain")  # as when the kernel ends
        assert new._client.is_closed()
        shell.run_line_magic("load_ext", "jupyter_brain")  # the fixture unloads it again


def test_the_cache_keeps_no_key_and_a_new_key_is_a_new_provider(monkeypatch):
    built: list[object] = []

    def build() -> object:
        built.append(object())
        return built[-1]

    cache = ProviderCache()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-one")
    first = cache.get("openai", None, build)
    assert cache.get("openai", None, build) is first and len(built) == 1
    assert cache.get("openai", "another-model", build) is not first  # another model: its own
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-two")
    assert cache.get("openai", None, build) is not first and len(built) == 3
    assert len(cache) == 1  # the ones built for the old key were dropped
    assert "sk-secret" not in repr(cache._kept) and "sk-secret" not in environment_fingerprint()
