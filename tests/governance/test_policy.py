"""The policy file: found where the admin puts it, validated (a bad one is one line and the
agent refuses), and its rules: refusals name the policy, the permission mode is clamped."""

from __future__ import annotations

import json

import pytest

from jupyter_brain.governance import Governance, PolicyRefusal
from jupyter_brain.governance.location import POLICY_NAME, find_policy


def load(path: str, user: str = "alice") -> Governance:
    return Governance.load({"JUPYTER_BRAIN_POLICY": path, "JUPYTERHUB_USER": user})


def test_a_valid_policy_is_in_force_with_its_file(write_policy):
    path = write_policy({"max_permission": "ask", "allowed_providers": ["Anthropic"], "teams": {"lab": ["alice"]},
                         "budgets": {"team": {"max_cost_per_day": 2}}})
    governance = load(path)
    assert governance.error is None and governance.rules is not None
    assert governance.policy.allowed_providers == ["anthropic"]
    text = governance.describe()
    assert f"Policy {path}" in text and "max_permission: ask" in text and "budget (team lab): $2.00 a day" in text


@pytest.mark.parametrize(("document", "expected"), [
    ('{"enabled": true,', "is not valid JSON"),
    ('["a list"]', "must be a JSON object"),
    ({"max_permision": "ask"}, "max_permision: Extra inputs are not permitted"),
    ({"max_permission": "everything"}, "max_permission: Input should be 'read-only', 'ask' or 'auto'"),
    ({"budgets": {"team": {"max_cost_per_day": -1}}}, "max_cost_per_day: Input should be greater than 0"),
    ({"ledger": "mysql://x"}, "ledger: Value error, must start with sqlite:/// or postgresql://"),
])
def test_a_bad_policy_is_one_line_naming_the_file_and_every_turn_is_refused(write_policy, document, expected):
    path = write_policy(document)
    governance = load(path)
    assert governance.rules is None and governance.error is not None
    assert expected in governance.error and path in governance.error and "\n" not in governance.error
    with pytest.raises(PolicyRefusal, match="does not run without a valid policy"):
        governance.check_turn(permission="ask", permission_explicit=False)


def test_a_policy_variable_naming_a_missing_file_refuses_rather_than_runs_unpoliced(tmp_path):
    governance = load(str(tmp_path / "nowhere.json"))
    assert governance.error is not None and "does not exist" in governance.error
    with pytest.raises(PolicyRefusal):
        governance.check_turn(permission="ask", permission_explicit=False)


def test_no_policy_checks_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "")
    governance = Governance.load({})
    assert not governance.active
    assert governance.check_turn(permission="auto", permission_explicit=True).permission == "auto"


def test_the_system_folder_wins_over_the_users_own(monkeypatch, tmp_path):
    """Jupyter's config path lists the user's folder first; the admin's file must win."""
    user_dir, system_dir = tmp_path / "home", tmp_path / "etc"
    for folder, permission in ((user_dir, "auto"), (system_dir, "read-only")):
        folder.mkdir()
        (folder / POLICY_NAME).write_text(json.dumps({"max_permission": permission}))
    monkeypatch.setattr("jupyter_core.paths.jupyter_config_path", lambda: [str(user_dir), str(system_dir)])
    assert find_policy({}) == system_dir / POLICY_NAME


def test_looser_permission_runs_at_the_policys_with_one_line_stricter_is_kept(write_policy):
    path = write_policy({"max_permission": "ask"})
    governance = load(path)
    permit = governance.check_turn(permission="auto", permission_explicit=True)
    assert permit.permission == "ask"
    assert permit.notes == (f"--permission auto is looser than the policy {path} allows (max_permission: ask): "
                            "running at ask",)
    assert governance.check_turn(permission="read-only", permission_explicit=True).permission == "read-only"
    assert governance.check_turn(permission="auto", permission_explicit=False).notes == ()  # a default: quietly


def test_forbidden_providers_models_web_and_servers_are_refused_naming_the_policy(write_policy):
    path = write_policy({"allowed_providers": ["anthropic", "scripted"], "allowed_models": ["claude-sonnet-*"],
                         "web": False, "mcp_servers": ["git"], "outside_agents": False})
    governance = load(path)
    with pytest.raises(PolicyRefusal, match=f"provider 'openai' .*: not allowed by the policy {path}"):
        governance.check_turn(permission="ask", permission_explicit=False, provider="openai")
    with pytest.raises(PolicyRefusal, match="provider 'ollama'"):
        governance.check_turn(permission="ask", permission_explicit=False, provider="anthropic,ollama")
    with pytest.raises(PolicyRefusal, match="model 'claude-opus-4-5'"):
        governance.check_turn(permission="ask", permission_explicit=False, model="claude-opus-4-5")
    governance.check_turn(permission="ask", permission_explicit=False, provider="anthropic", model="claude-sonnet-4-5")
    with pytest.raises(PolicyRefusal, match="web search"):
        governance.check_turn(permission="ask", permission_explicit=False, web="on")
    assert governance.admits_server("git") is None
    assert "MCP server 'fetch' is not in the policy's mcp_servers" in governance.admits_server("fetch")
    with pytest.raises(PolicyRefusal, match="an outside agent"):
        governance.rules.check_outside_agents()


def test_enabled_false_is_the_master_switch(write_policy):
    governance = load(write_policy({"enabled": False}))
    with pytest.raises(PolicyRefusal, match=r"turned off by the policy .* \(enabled: false\)"):
        governance.check_turn(permission="read-only", permission_explicit=False)


def test_a_policy_naming_a_model_that_does_not_exist_warns_and_allows_only_that_name(write_policy):
    path = write_policy({"allowed_models": ["claude-sonnet-4*", "gpt-9-ultra"]})
    governance = load(path)
    assert governance.warnings == (f"policy {path}: allowed_models 'gpt-9-ultra' matches no model jupyter-brain "
                                   "knows (only a model of that name can be used)",)
    assert "warning: policy" in governance.describe()
    with pytest.raises(PolicyRefusal, match="model 'gpt-4o'"):
        governance.check_turn(permission="ask", permission_explicit=False, model="gpt-4o")


def test_the_user_is_the_hub_user_else_the_os_user(write_policy):
    import getpass

    path = write_policy({})
    assert load(path, user="bob").user == "bob"
    assert Governance.load({"JUPYTER_BRAIN_POLICY": path}).user == getpass.getuser()


def test_budgets_by_name_and_for_everyone(write_policy):
    path = write_policy({"budgets": {"user": {"*": {"max_tokens_per_day": 1000}, "bob": {"max_cost_per_day": 5}},
                                     "team": {"max_cost_per_day": 1}},
                         "teams": {"a": ["alice", "bob"], "b": ["carol"]}})
    alice, bob = load(path, "alice").scopes(), load(path, "bob").scopes()
    assert [(s.kind, s.name, s.members) for s in alice] == [("user", "alice", ("alice",)), ("team", "a", ("alice", "bob"))]
    assert alice[0].caps.max_tokens_per_day == 1000 and bob[0].caps.max_cost_per_day == 5


@pytest.mark.parametrize("doc", ["README.md", "docs/guide/admins.md"])
def test_the_documented_policy_examples_are_valid_policies(doc):
    """The admin copies the example: it must load as it is shown (a renamed key would fail here)."""
    import re
    from pathlib import Path

    from jupyter_brain.governance.policy import Policy

    text = (Path(__file__).resolve().parents[2] / doc).read_text(encoding="utf-8")
    examples = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.S) if '"ledger"' in block]
    assert examples, f"{doc} shows no policy example"
    for example in examples:
        Policy.model_validate(example)
