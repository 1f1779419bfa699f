"""ContextFitter's running count: what it remembers gives the same numbers as counting anew."""

from __future__ import annotations

from jupyter_brain.agent.artifacts import ArtifactStore, artifact_tool
from jupyter_brain.agent.context.fitting import ContextFitter, count_tools
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


def test_count_tools_is_remembered_per_tool_list(counter):
    registry = AgentToolRegistry([lookup, artifact_tool(ArtifactStore())])
    first, second = registry.schemas(), registry.schemas()  # new dicts each time, same schemas
    assert first is not second
    assert count_tools(counter, first) == counter.count_tools(first)
    assert count_tools(counter, second) == counter.count_tools(second)
    assert count_tools(counter, []) == 0
    odd = [{**first[0], "cache_control": {"type": "ephemeral"}}]  # not a ToolSpec schema: counted as is
    assert count_tools(counter, odd) == counter.count_tools(odd)


def test_read_artifact_schema_is_built_once():
    one, two = artifact_tool(ArtifactStore()), artifact_tool(ArtifactStore())
    assert one.input_schema is two.input_schema
    assert one.schema() == two.schema()


def _fitter(workspace) -> tuple[ContextFitter, list]:
    harness = AgentHarness(ScriptedProvider(["ok"]), AgentToolRegistry([lookup]), None, workspace=workspace)
    schemas = harness.tools.schemas()
    return harness.context_fitter(schemas), schemas


def test_the_system_part_is_counted_again_only_when_it_changes(counter):
    texts = iter(["files: a.csv", "files: a.csv", "files: a.csv, b.csv", "files: a.csv, b.csv"])
    fitter, schemas = _fitter(lambda: next(texts))
    messages = [{"role": "user", "content": "hello"}]
    for step in range(4):
        if step:
            messages.append({"role": "assistant", "content": f"answer {step}"})
        _, request = fitter.fit(messages, "You help.", protect=0, goal="hello", summarize=lambda old: "",
                                step=step + 1, emit=lambda e: None)
        assert request[1]["content"].startswith("files:")
        expected = fitter.counter.count_messages(request) + fitter.counter.count_tools(schemas)
        assert fitter.last_request_raw == expected, step


def test_a_changed_system_prompt_is_counted():
    fitter, schemas = _fitter(None)
    messages = [{"role": "user", "content": "hi"}]
    sizes = []
    for prompt in ("short", "a much longer system prompt than the first one", "short"):
        _, request = fitter.fit(messages, prompt, protect=0, goal="hi", summarize=lambda old: "", step=1,
                                emit=lambda e: None)
        assert fitter.last_request_raw == fitter.counter.count_messages(request) + fitter.counter.count_tools(schemas)
        sizes.append(fitter.last_request_raw)
    assert sizes[0] == sizes[2] < sizes[1]


def test_a_first_request_is_sent_before_it_is_counted_when_the_count_cannot_matter(monkeypatch):
    """#40: with the tokenizer not loaded yet, a request whose byte bound is below the warning
    level goes out uncounted; whatever reads the count then gets the exact figure, and the
    next request counts on from it."""
    from jupyter_brain.agent.context import fitting

    fitter, schemas = _fitter(None)
    counted = []
    real = fitter.counter.count_message
    monkeypatch.setattr(fitter.counter, "count_message", lambda m: counted.append(m) or real(m))
    monkeypatch.setattr(fitting, "tokenizer_loaded", lambda: False)
    messages = [{"role": "user", "content": "hello é"}]
    events: list = []
    _, request = fitter.fit(messages, "You help.", protect=0, goal="hello", summarize=lambda old: "",
                            step=1, emit=events.append)
    assert counted == [] and fitter.tracker.last_tokens == 0  # nothing counted before the call
    exact = fitter.counter.count_messages(request) + fitter.counter.count_tools(schemas)
    assert fitter.counter.bound_request(request, schemas) >= exact
    assert fitter.last_request_raw == exact and fitter.tracker.last_tokens == exact
    messages.append({"role": "assistant", "content": "hi"})
    _, second = fitter.fit(messages, "You help.", protect=0, goal="hello", summarize=lambda old: "",
                           step=2, emit=events.append)
    assert fitter.last_request_raw == fitter.counter.count_messages(second) + fitter.counter.count_tools(schemas)
    assert events == []


def test_a_request_near_a_context_level_is_counted_before_it_is_sent(monkeypatch):
    """The byte bound reaches the warning level: the request is counted at once, as before."""
    from jupyter_brain.agent.context import fitting

    fitter, schemas = _fitter(None)
    monkeypatch.setattr(fitting, "tokenizer_loaded", lambda: False)
    fitter.tracker.context_window = 200  # the warning level at 140 tokens: the tools' bytes alone pass it
    _, request = fitter.fit([{"role": "user", "content": "hello"}], "You help.", protect=0, goal="hello",
                            summarize=lambda old: "", step=1, emit=lambda e: None)
    assert fitter._uncounted is None
    assert fitter.tracker.last_tokens == fitter.counter.count_messages(request) + fitter.counter.count_tools(schemas)
