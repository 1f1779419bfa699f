"""Warm up at ``%load_ext``, so a kernel's first turn pays only for itself.

A first ``%%agent`` turn used to pay, on top of the turn, for what every later turn finds
ready: the agent core's and the view's imports, the tokenizer's BPE tables, and the
built-in tools' argument models and JSON schemas (both cached per definition:
``agent/tool_models.py``, ``ToolSpec.input_schema``), the checkpoint store's module and the
SDK of the provider the environment configures (imported, not built). A daemon thread started by
``load_ipython_extension`` does that work once per process, while the user's next cells
run (loading data, usually). A turn that starts before it is done waits on the same
import and cache locks: the work is never done twice, only earlier.

Nothing here touches the kernel's namespace, its working folder or ``AgentMagics``
settings (``data_dir`` may still change): the tools are built over an empty namespace
in a throwaway folder, and nothing is written. ``JUPYTER_BRAIN_WARM_UP=0`` turns it off.
A failure is logged at debug level and changes nothing: the first turn does the work.

The thread shares the GIL with the cell, so while a turn waits for its first word (a first
cell right after ``%load_ext``, issue #40) the warm-up does only what that word needs (the
turn's modules, the SDK, the tools' schemas): the rest (the tokenizer, which the first
request no longer waits for — ``agent/context/fitting.py`` counts it after sending — and
``LATER_MODULES``) waits until no turn is before its first word (``hold``).

Python's cyclic garbage collector is paused while the warm-up imports (``gc_paused``): those
imports create about a million long-lived objects and, measured, trigger three full
collections that free nothing (about 350 ms of CPU for the SDK and ours). What they made is
then frozen, so no young collection scans it, and once no turn is before its first word it
is moved into the oldest generation (``gc.unfreeze``), where a full collection still sees
it: nothing is kept from the collector for good. The pause is process-wide and lasts while
the imports run (a second or two); a user's cell running meanwhile frees its objects by
reference counting as always, and its reference cycles at the next collection after. A
process whose collector is already off or frozen is left alone.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# What every turn imports (the agent core, its tools, the view), in dependency order.
MODULES = (
    "jupyter_brain.notebook.agent_cell",
    "jupyter_brain.session",
    "jupyter_brain.agent.harness",
    "jupyter_brain.tools",
    "jupyter_brain.widgets.agent_view",
    "jupyter_brain.tools.rich_output",
    "jupyter_brain.agent.checkpoints",  # the kernel's checkpoint store
)
# What a turn needs only after its first word (a first turn right after ``%load_ext`` must not
# wait for them: the warm-up loads them last, once no turn is before its first word).
LATER_MODULES = (
    "jupyter_brain.notebook.turn_export",  # remember_turn, when the turn has ended
    "jupyter_brain.widgets.text_view",  # the Markdown transcript at the view's close (or a headless turn's view)
    "jupyter_brain.mcp",  # our MCP glue: its SDK loads only when mcp.json names a server
)

_started = threading.Lock()
_thread: threading.Thread | None = None
_done = threading.Event()
seconds: float | None = None  # how long the warm-up took, once it is done (benchmarks)
log = logging.getLogger("jupyter_brain.warm_up")
# Turns before their first word: the warm-up's later work waits for none (``hold``).
_waiting_turns = 0
_no_turn_waiting = threading.Condition()
_HOLD_LIMIT_S = 60.0  # a turn that never reports still lets the warm-up finish
# The first events of a model's answer: its first word (or thought, or tool call), or the step's end.
_FIRST_OUTPUT = frozenset({"text_delta", "thinking_delta", "tool_call_start", "step_end", "error", "turn_end"})


def start() -> threading.Thread | None:
    """Start the warm-up once per process (None when it is off or already started)."""
    global _thread
    if os.environ.get("JUPYTER_BRAIN_WARM_UP", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    with _started:
        if _thread is not None:
            return None
        _thread = threading.Thread(target=_run, name="jupyter-brain-warm-up", daemon=True)
        _thread.start()
        return _thread


def wait(timeout: float | None = None) -> bool:
    """Block until the warm-up has finished (tests, benchmarks); False on timeout, and at once
    when no warm-up was started (turned off): nothing would ever end the wait."""
    if _thread is None:
        return _done.is_set()
    return _done.wait(timeout)


def hold() -> Callable[[], None]:
    """A turn starts: the warm-up's later work waits until the returned ``release`` is
    called (at the turn's first output, ``at_first_output``, or its end). Idempotent."""
    global _waiting_turns
    with _no_turn_waiting:
        _waiting_turns += 1
    released = threading.Event()

    def release() -> None:
        global _waiting_turns
        with _no_turn_waiting:
            if released.is_set():
                return
            released.set()
            _waiting_turns -= 1
            _no_turn_waiting.notify_all()

    return release


def at_first_output(on_event: Callable[[Any], Any], release: Callable[[], None] | None) -> Callable[[Any], Any]:
    """``on_event``, calling ``release`` at the turn's first output event (its first word)."""
    if release is None:
        return on_event
    done = threading.Event()

    def watched(event: Any) -> Any:
        if not done.is_set() and getattr(event, "type", None) in _FIRST_OUTPUT:
            done.set()
            release()
        return on_event(event)

    return watched


def _wait_for_first_words() -> None:
    with _no_turn_waiting:
        _no_turn_waiting.wait_for(lambda: _waiting_turns <= 0, timeout=_HOLD_LIMIT_S)


def _run() -> None:
    global seconds
    start = time.perf_counter()
    try:
        warm_up()
    except Exception as exc:  # noqa: BLE001 - a warm-up never breaks the kernel; the turn does the work
        log.debug("warm-up stopped: %s", exc)
    finally:
        seconds = time.perf_counter() - start
        _done.set()


def warm_up() -> None:
    """Import the turn's modules and the SDK, build the built-in tools' schemas (with the
    collector paused); then, once no turn is before its first word, load the tokenizer and
    ``LATER_MODULES``."""
    froze = False
    try:
        with gc_paused() as froze:
            for name in MODULES:
                importlib.import_module(name)
            from ..agent.artifacts import ArtifactStore, artifact_tool
            from ..tools import default_tools

            _configured_sdk()
            with tempfile.TemporaryDirectory(prefix="jupyter-brain-warm-up-") as folder:
                for spec in [*default_tools({}, folder), artifact_tool(ArtifactStore())]:
                    spec.schema()
        _wait_for_first_words()
    finally:
        if froze:
            gc.unfreeze()  # into the oldest generation: full collections see it again
    from ..foundation.tokens import TokenCounter

    TokenCounter().count_text("warm up")
    for name in LATER_MODULES:
        importlib.import_module(name)


@contextmanager
def gc_paused() -> Iterator[bool]:
    """The collector off while the block runs, then what was made frozen and the collector on
    again; yields whether it froze (the caller unfreezes). Left alone (yields False) when the
    collector is already off or something is frozen: then the process manages it itself."""
    if not gc.isenabled() or gc.get_freeze_count():
        yield False
        return
    gc.disable()
    try:
        yield True
    finally:
        gc.freeze()
        gc.enable()


def _configured_sdk() -> None:
    """Import the SDK of the provider ``auto`` would pick (an import only: no client, no request)."""
    from ..providers.registry import configured_provider

    choice = configured_provider()
    if choice in ("openai", "anthropic"):
        importlib.import_module(choice)
