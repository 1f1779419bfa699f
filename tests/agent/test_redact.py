"""Masking secrets in logged and displayed text."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.redact import MASK, Redactor, redact

ANTHROPIC = "sk-ant-api03-" + "Ab3_-" * 16 + "xyzAA"
OPENAI_PROJ = "sk-proj-" + "a1B2c3D4e5F6g7H8" * 3
OPENAI_LEGACY = "sk-" + "Z9y8X7w6V5u4T3s2R1q0P9o8"
OPENAI_SVC = "sk-svcacct-" + "Qq1" * 10


@pytest.fixture
def r():
    return Redactor(include_env=False)


@pytest.mark.parametrize("key", [ANTHROPIC, OPENAI_PROJ, OPENAI_LEGACY, OPENAI_SVC])
def test_provider_key_formats(r, key):
    out = r(f"the key is {key}.")
    assert key not in out
    assert out == f"the key is {MASK}."


def test_key_inside_json_and_quotes(r):
    out = r(f'{{"api_key": "{OPENAI_PROJ}", "other": 1}}')
    assert OPENAI_PROJ not in out and '"other": 1' in out


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abcdefghijklmnop.qrstuv",
        "authorization: bearer ABCDEFGHIJKLMNOP",
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx.sig'",
    ],
)
def test_bearer_tokens(r, text):
    out = r(text)
    assert MASK in out
    assert "abcdefghijklmnop" not in out.lower() and "eyJhbGci" not in out
    assert "Bearer " in out or "bearer " in out  # the scheme is kept for context


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("api_key=abcdef1234567890", "api_key="),
        ("x-api-key: abcdef1234567890", "x-api-key: "),
        ('"token": "abcdef1234567890"', '"token": "'),
        ("SECRET = 'abcdef1234567890'", "SECRET = '"),
    ],
)
def test_key_value_assignments(r, text, kept):
    out = r(text)
    assert "abcdef1234567890" not in out
    assert out.startswith(kept) and MASK in out


@pytest.mark.parametrize(
    "token",
    ["ghp_" + "a" * 36, "hf_" + "B" * 34, "AKIAIOSFODNN7EXAMPLE"],
)
def test_other_well_known_formats(r, token):
    assert r(f"x {token} y") == f"x {MASK} y"


def test_configured_secret_values():
    r = Redactor(["hunter2-but-longer", "short"], include_env=False)
    out = r("pw=hunter2-but-longer and short")
    assert "hunter2-but-longer" not in out
    assert "short" in out  # values under 8 characters are never masked (too many false hits)


def test_longer_secret_replaced_first():
    r = Redactor(["abcdefgh", "abcdefgh-ijkl"], include_env=False)
    assert r("abcdefgh-ijkl") == MASK


def test_add_secret():
    r = Redactor(include_env=False)
    assert r("my-plain-password") == "my-plain-password"
    r.add("my-plain-password")
    r.add("my-plain-password")
    r.add("tiny")
    assert r("x my-plain-password y") == f"x {MASK} y"
    assert r("tiny") == "tiny"


@pytest.mark.parametrize("env", ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "JUPYTER_BRAIN_API_KEY"])
def test_env_key_values(monkeypatch, env):
    value = "localkey-0000-plain"  # a format no pattern knows
    monkeypatch.setenv(env, value)
    assert Redactor()(f"using {value}") == f"using {MASK}"
    assert redact(f"using {value}") == f"using {MASK}"
    assert Redactor(include_env=False)(f"using {value}") == f"using {value}"


def test_short_env_values_ignored(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert Redactor()("x marks the spot") == "x marks the spot"


@pytest.mark.parametrize(
    "text",
    [
        "Ordinary text with no secrets: mean=4.2, n=100",
        "max_tokens=4096 input_tokens: 123456789012",
        "the task-force-management-plan is ready",
        "see disk-usage-monitoring-report for details",
        "risk-adjusted-return-calculation",
        "tokenizer: bert-base-uncased-model",
    ],
)
def test_ordinary_text_untouched(r, text):
    assert r(text) == text


def test_idempotent(r):
    once = r(f"{ANTHROPIC} and Bearer abcdefghijklmnopqrstu")
    assert r(once) == once
