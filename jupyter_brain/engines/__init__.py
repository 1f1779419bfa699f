"""Outside agents as a cell's engine, over the Agent Client Protocol (issue #36).

One entry point, ``EngineHost.run(EngineTurn)`` → ``EngineOutcome`` (the ``TurnResult``,
the turn's recording, a note about caps). Imports ``agent/`` (events, the emitter,
``TurnResult``) and the ``agent-client-protocol`` SDK; never IPython or the notebook layer
(``notebook/engine_cell.py`` is the thin notebook side).
"""

from .commands import BUILTIN, NAMED_ENGINES, EngineNotFound, EngineSpec, engine_spec, require_installed
from .host import EngineHost, EngineOutcome, EngineTurn
from .recording import EngineRecording, cell_key, logged_engine_recordings, saved_engine_recordings

__all__ = [
    "BUILTIN",
    "NAMED_ENGINES",
    "EngineHost",
    "EngineNotFound",
    "EngineOutcome",
    "EngineRecording",
    "EngineSpec",
    "EngineTurn",
    "cell_key",
    "engine_spec",
    "logged_engine_recordings",
    "require_installed",
    "saved_engine_recordings",
]
