"""``<data_dir>/mcp.json``: the mcpServers format, ${VAR} references, what is shown."""

from __future__ import annotations

import json

import pytest

from jupyter_brain.mcp.config import (
    ConfigError,
    ServerConfig,
    config_path,
    load_servers,
    remove_server,
    resolve,
    save_server,
)

CLAUDE_DESKTOP = {
    "mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "${TZ}"}},
        "github": {"type": "http", "url": "https://api.example.com/mcp/",
                   "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
        "off": {"command": "x", "disabled": True},
    }
}


def test_a_pasted_claude_desktop_config_loads(tmp_path):
    path = config_path(tmp_path)
    path.write_text(json.dumps(CLAUDE_DESKTOP))
    servers, errors = load_servers(path)
    assert errors == {}
    assert set(servers) == {"time", "github"}  # disabled ones are left out
    assert servers["time"].transport == "stdio" and servers["time"].args == ("mcp-server-time",)
    assert servers["github"].transport == "http" and servers["github"].url == "https://api.example.com/mcp/"


def test_vs_code_servers_key_and_url_without_type(tmp_path):
    path = config_path(tmp_path)
    path.write_text(json.dumps({"servers": {"a": {"url": "http://127.0.0.1:1/mcp"}, "b": {"type": "stdio",
                                                                                        "command": "srv"}}}))
    servers, errors = load_servers(path)
    assert errors == {} and servers["a"].transport == "http" and servers["b"].command == "srv"


def test_missing_file_means_no_servers(tmp_path):
    assert load_servers(tmp_path / "mcp.json") == ({}, {})


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"args": ["x"]}, "needs a 'command'"),
        ({"command": "x", "args": "not a list"}, "'args' must be a list"),
        ({"type": "http", "url": "ftp://x"}, "needs a 'url'"),
        ({"type": "sse", "url": "http://x/sse"}, "SSE transport is deprecated"),
        ({"type": "websocket"}, "unknown type 'websocket'"),
        ({"command": "x", "env": {"A": ["list"]}}, "'env' must be an object"),
        ({"command": "x", "tool_timeout_s": -1}, "positive number of seconds"),
    ],
)
def test_bad_entries_are_reported_per_server(tmp_path, entry, needle):
    path = config_path(tmp_path)
    path.write_text(json.dumps({"mcpServers": {"bad": entry, "good": {"command": "ok"}}}))
    servers, errors = load_servers(path)
    assert set(servers) == {"good"}
    assert needle in errors["bad"]


def test_invalid_json_is_one_error(tmp_path):
    path = config_path(tmp_path)
    path.write_text("{not json")
    servers, errors = load_servers(path)
    assert servers == {} and "not valid JSON" in errors["(config)"]


def test_bad_server_names_are_refused():
    with pytest.raises(ConfigError, match="letters, digits"):
        ServerConfig.from_entry("my server", {"command": "x"})


def test_references_resolve_from_the_environment():
    env = {"TOKEN": "s3cret-value", "EMPTY": ""}
    secrets: list[str] = []
    assert resolve("Bearer ${TOKEN}", env, secrets) == "Bearer s3cret-value"
    assert resolve("${env:TOKEN}", env) == "s3cret-value"  # VS Code's spelling
    assert resolve("${MISSING:-fallback}", env) == "fallback"
    assert resolve("$TOKEN and ${EMPTY}", env) == "$TOKEN and "
    assert secrets == ["s3cret-value"]
    with pytest.raises(ConfigError, match="MISSING is not set"):
        resolve("${MISSING}", env)


def test_resolved_values_are_reported_as_secrets_but_the_summary_shows_only_names():
    config = ServerConfig.from_entry("s", {"command": "/opt/venv/bin/python", "args": ["srv.py", "--key=${K}"],
                                           "env": {"API_KEY": "${K}", "GH_TOKEN": "pasted-token", "MODE": "fast"}})
    env, secrets = config.resolved_env({"K": "v4lue-from-env"})
    assert env == {"API_KEY": "v4lue-from-env", "GH_TOKEN": "pasted-token", "MODE": "fast"}
    assert set(secrets) == {"v4lue-from-env", "pasted-token"}  # references, and literals under secret names
    args, arg_secrets = config.resolved_args({"K": "v4lue-from-env"})
    assert args == ["srv.py", "--key=v4lue-from-env"] and arg_secrets == ["v4lue-from-env"]
    summary = config.summary()
    assert summary == "python srv.py --key=${K}  env: API_KEY, GH_TOKEN, MODE"
    assert "pasted-token" not in summary
    http = ServerConfig.from_entry("h", {"type": "http", "url": "https://user:pw@host/mcp",
                                         "headers": {"Authorization": "Bearer x"}})
    assert http.summary() == "https://host/mcp  headers: Authorization"


def test_save_and_remove_keep_the_rest_of_the_file(tmp_path):
    path = config_path(tmp_path / "data")
    assert save_server(path, "one", {"command": "a"}) is False  # creates the folder and file
    document = json.loads(path.read_text())
    document["other"] = {"kept": True}
    path.write_text(json.dumps(document))
    assert save_server(path, "one", {"command": "b"}) is True
    assert save_server(path, "two", {"type": "http", "url": "http://127.0.0.1:1/mcp"}) is False
    document = json.loads(path.read_text())
    assert document["other"] == {"kept": True}
    assert document["mcpServers"]["one"] == {"command": "b"}
    assert remove_server(path, "one") is True and remove_server(path, "one") is False
    assert list(json.loads(path.read_text())["mcpServers"]) == ["two"]
    with pytest.raises(ConfigError):
        save_server(path, "bad", {"type": "http"})
    assert "bad" not in json.loads(path.read_text())["mcpServers"]
