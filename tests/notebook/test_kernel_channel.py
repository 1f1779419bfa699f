"""kernel_channel's routing, without a kernel: a comm is routed before it opens, and what
its front-end says before the callbacks are set is kept for them (the real-kernel checks
are in test_subshell_comm_kernel.py and test_lab_ready_kernel.py)."""

from __future__ import annotations

import comm as comm_package
import pytest

from jupyter_brain.notebook import kernel_channel


class FakeComm:
    """The parts of ``comm.base_comm.BaseComm`` routing touches."""

    def __init__(self, *, primary: bool = True, **kwargs) -> None:
        self.primary = primary
        self.kwargs = kwargs
        self._msg_callback = None
        self._close_callback = None
        self.opened_with: dict | None = None
        self.route_when_opened: str | None = None

    def _reply_subshell_for(self, data, default):
        return default

    def open(self, data=None, metadata=None, buffers=None) -> None:
        self.opened_with = {"data": data, "metadata": metadata, "buffers": buffers}
        self.route_when_opened = self._reply_subshell_for({}, None)

    def on_msg(self, callback) -> None:
        self._msg_callback = callback

    def on_close(self, callback) -> None:
        self._close_callback = callback


def _with_subshell(monkeypatch, subshell: str | None) -> None:
    monkeypatch.setattr(kernel_channel, "_kernel", lambda: object())
    monkeypatch.setattr(kernel_channel, "_subshell_id", lambda kernel: subshell)
    monkeypatch.setattr(comm_package, "create_comm", FakeComm)


def test_a_comm_made_in_the_block_is_routed_before_it_opens(monkeypatch) -> None:
    _with_subshell(monkeypatch, "sub-1")
    with kernel_channel.comms_routed_from_the_start() as routed:
        made = comm_package.create_comm(target_name="t", data={"hello": 1}, metadata={"v": 2})
    assert routed == [made]
    assert made.primary is False  # not opened by its constructor ...
    assert made.opened_with == {"data": {"hello": 1}, "metadata": {"v": 2}, "buffers": None}
    assert made.route_when_opened == "sub-1"  # ... but after the routing, with what it was given
    assert made.kwargs == {"target_name": "t"}
    assert comm_package.create_comm is FakeComm  # the module is as it was after the block


def test_without_a_subshell_nothing_is_patched_or_routed(monkeypatch) -> None:
    _with_subshell(monkeypatch, None)
    with kernel_channel.comms_routed_from_the_start() as routed:
        assert comm_package.create_comm is FakeComm
        made = comm_package.create_comm(target_name="t")
    assert routed == [] and made.primary is True


def test_messages_and_a_close_before_the_callbacks_are_kept_for_them() -> None:
    made = FakeComm()
    kernel_channel._route(made, "sub-1")
    made.handle_msg({"n": 1})
    made.handle_close({"closed": True})
    got, closed = [], []
    made.on_msg(got.append)
    assert got == [{"n": 1}]
    made.handle_msg({"n": 2})  # once set, straight to the callback
    assert got == [{"n": 1}, {"n": 2}]
    made.on_close(closed.append)
    assert closed == [{"closed": True}]
    assert made._reply_subshell_for({}, None) == "sub-1"


def test_a_callback_set_again_does_not_get_old_messages_twice() -> None:
    made = FakeComm()
    kernel_channel._route(made, "sub-1")
    made.handle_msg({"n": 1})
    first, second = [], []
    made.on_msg(first.append)
    made.on_msg(second.append)
    made.handle_msg({"n": 2})
    assert first == [{"n": 1}] and second == [{"n": 2}]


class FakeShellChannelThread:
    """ipykernel's shell channel thread: ``io_loop.add_callback`` runs callbacks there
    (here: at once, or kept in ``later`` when ``run_at_once`` is False)."""

    def __init__(self, create, *, run_at_once: bool = True) -> None:
        self.manager = type("Manager", (), {"_create_subshell": staticmethod(create)})()
        self.later: list = []
        self.io_loop = self
        self.run_at_once = run_at_once

    def add_callback(self, callback) -> None:
        callback() if self.run_at_once else self.later.append(callback)


def _kernel_with(thread: FakeShellChannelThread):
    return type("Kernel", (), {"_supports_kernel_subshells": True, "shell_channel_thread": thread})()


def test_a_subshell_is_made_on_the_shell_channel_thread_and_remembered(monkeypatch) -> None:
    made = iter(["sub-1", "sub-2"])
    kernel = _kernel_with(FakeShellChannelThread(lambda: next(made)))
    monkeypatch.setattr(kernel_channel, "_subshells", {})
    assert kernel_channel._subshell_id(kernel) == "sub-1"
    assert kernel_channel._subshell_id(kernel) == "sub-1"  # one per kernel


def test_a_refused_subshell_falls_back_quietly_into_the_log(monkeypatch, caplog, capsys) -> None:
    def refuse() -> str:
        raise RuntimeError("no more threads")

    monkeypatch.setattr(kernel_channel, "_subshells", {})
    caplog.set_level("DEBUG", logger="jupyter_brain")
    assert kernel_channel._subshell_id(_kernel_with(FakeShellChannelThread(refuse))) is None
    assert "no more threads" in caplog.text
    assert all(r.levelname in ("DEBUG", "INFO") for r in caplog.records)  # logging's last resort prints WARNING up
    assert capsys.readouterr().err == ""


def test_a_subshell_not_made_in_time_is_not_made_later() -> None:
    made: list[str] = []
    thread = FakeShellChannelThread(lambda: made.append("sub-1") or "sub-1", run_at_once=False)
    with pytest.raises(TimeoutError, match="did not answer"):
        kernel_channel._create_subshell(_kernel_with(thread), timeout=0.05)
    thread.later[0]()  # the shell channel thread gets to it after the caller gave up
    assert made == []
