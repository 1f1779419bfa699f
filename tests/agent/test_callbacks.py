"""AgentCallbacks: optional hooks that can never break a turn."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from jupyter_brain.agent.callbacks import AgentCallbacks

HOOKS = ("on_stream_chunk", "on_tool_start", "on_tool_end", "on_reflection", "on_step", "on_event")


def test_defaults_are_none_and_firing_them_is_a_no_op():
    cb = AgentCallbacks()
    for hook in HOOKS:
        assert getattr(cb, hook) is None
        cb.fire(hook, 1)
    cb.fire("not_a_hook", 1)


def test_constructor_callables_receive_arguments():
    seen = []
    cb = AgentCallbacks(on_tool_start=lambda name, args: seen.append((name, args)), on_step=seen.append)
    cb.fire("on_tool_start", "read", {"path": "a"})
    cb.fire("on_step", 3)
    assert seen == [("read", {"path": "a"}), 3]


def test_raising_callback_is_logged_not_raised(caplog):
    def bad(_):
        raise ValueError("ui exploded")

    after = []
    cb = AgentCallbacks(on_event=bad, on_step=after.append)
    with caplog.at_level(logging.ERROR, logger="jupyter_brain.callbacks"):
        cb.fire("on_event", object())
    cb.fire("on_step", 1)
    assert after == [1]
    (record,) = [r for r in caplog.records if r.name == "jupyter_brain.callbacks"]
    assert "on_event" in record.getMessage()
    assert record.exc_info is not None and "ui exploded" in caplog.text


def test_wrong_arity_is_contained(caplog):
    cb = AgentCallbacks(on_step=lambda: None)
    with caplog.at_level(logging.ERROR, logger="jupyter_brain.callbacks"):
        cb.fire("on_step", 1)
    assert "on_step" in caplog.text


class Recorder(AgentCallbacks):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_reflection(self, result):
        self.seen.append(("reflection", result))

    def on_step(self, step):
        self.seen.append(("step", step))


def test_subclass_method_overrides_work():
    cb = Recorder()
    cb.fire("on_reflection", "r")
    cb.fire("on_step", 2)
    cb.fire("on_event", "ignored")
    assert cb.seen == [("reflection", "r"), ("step", 2)]


def test_subclass_without_init_override():
    class Plain(AgentCallbacks):
        seen: list = []

        def on_tool_end(self, event):
            type(self).seen.append(event)

    cb = Plain()
    cb.fire("on_tool_end", "e")
    assert Plain.seen == ["e"]


def test_dataclass_subclass_method_overrides_work():
    @dataclass
    class DC(AgentCallbacks):
        seen: list = field(default_factory=list)

        def on_stream_chunk(self, text):
            self.seen.append(text)

    cb = DC()
    cb.fire("on_stream_chunk", "hi")
    assert cb.seen == ["hi"]


def test_raising_subclass_method_is_contained(caplog):
    class Bad(AgentCallbacks):
        def on_event(self, event):
            raise RuntimeError("nope")

    with caplog.at_level(logging.ERROR, logger="jupyter_brain.callbacks"):
        Bad().fire("on_event", 1)
    assert "on_event" in caplog.text


def test_instance_callable_beats_subclass_method():
    seen = []
    cb = Recorder()
    cb.on_step = lambda step: seen.append(step)
    cb.fire("on_step", 5)
    assert seen == [5] and cb.seen == []
