"""A request's fingerprint: what it covers, what it leaves out, and how a change is named."""

from __future__ import annotations

from jupyter_brain.providers.replay import fingerprint, what_changed

TOOLS = [{"name": "run_python", "input_schema": {}}, {"name": "read_file", "input_schema": {}}]


def request(*, date: str = "2026-01-02", folder: str = "/home/a/project", listing: str = "sales.csv",
            prompt: str = "Which month?", result: str = "feb", call_id: str = "toolu_1",
            signature: str = "sig-a") -> list[dict]:
    return [
        {"role": "system", "content": f"You are jupyter-brain. Working directory: {folder}"},
        {"role": "system", "kind": "runtime", "content": f"Today is {date}."},
        {"role": "system", "kind": "workspace", "content": f"files: {listing}"},
        {"role": "user", "content": "Earlier question"},
        {"role": "assistant", "content": "Earlier answer"},
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": "", "thinking": [{"text": "look", "signature": signature}],
         "tool_calls": [{"id": call_id, "name": "run_python", "arguments": {"code": "print(drop)"}}]},
        {"role": "tool", "tool_call_id": call_id, "name": "run_python", "content": result, "is_error": False},
    ]


def test_volatile_layers_ids_and_signatures_leave_the_fingerprint_unchanged():
    base = fingerprint(request(), TOOLS, flags={"think": "low"})
    elsewhere = fingerprint(request(date="2031-07-04", folder="/tmp/other place", listing="x.ipynb",
                                    call_id="call_9", signature="sig-b"), list(reversed(TOOLS)), flags={"think": "low"})
    assert base.value == elsewhere.value and len(base.value) == 64


def test_meaning_changes_the_fingerprint_and_is_named():
    base = fingerprint(request(), TOOLS, flags={"think": "low"})
    cases = {
        "the prompt changed": fingerprint(request(prompt="Which year?"), TOOLS, flags={"think": "low"}),
        "the result of tool call 1 (run_python) changed": fingerprint(request(result="mar"), TOOLS, flags={"think": "low"}),
        "the flags changed (think)": fingerprint(request(), TOOLS, flags={"think": "high"}),
        "the tools offered changed": fingerprint(request(), TOOLS[:1], flags={"think": "low"}),
    }
    for message, changed in cases.items():
        assert changed.value != base.value
        assert what_changed(base.parts, changed.parts, {"think": "high"} if "flags" in message else {"think": "low"},
                            {"think": "low"}) == message
    history = request()
    history[3] = {"role": "user", "content": "Another earlier question"}
    assert what_changed(base.parts, fingerprint(history, TOOLS, flags={"think": "low"}).parts) == \
        "the history before this cell changed"


def test_meaningful_system_layers_count():
    with_memory = [*request(), {"role": "system", "kind": "memory", "content": "The user likes bars."}]
    assert fingerprint(with_memory, TOOLS).value != fingerprint(request(), TOOLS).value


def test_object_addresses_in_tool_results_do_not_count():
    one = fingerprint(request(result="<function f at 0x7f3a2b1c0d10>"), TOOLS)
    other = fingerprint(request(result="<function f at 0x7f99aa00bb20>"), TOOLS)
    assert one.value == other.value
    assert fingerprint(request(result="<function g at 0x7f99aa00bb20>"), TOOLS).value != one.value
