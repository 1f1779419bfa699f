"""Fixtures shared by the test modules."""

from __future__ import annotations

import datetime as dt

import pytest
from IPython.core.interactiveshell import InteractiveShell


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--clock", metavar="ISO-DATETIME", default=None,
                     help="move the wall clock to this moment for the whole run (time-machine: time.time and "
                          "datetime tick on from there; time.monotonic and sleeps stay real). scripts/test.sh's "
                          "summer pass uses 2027-07-15T12:00:00")


def pytest_configure(config: pytest.Config) -> None:
    moment = config.getoption("--clock")
    if moment:
        import time_machine

        # libfaketime, tried first, also faked file times (every import recompiled) and broke
        # absolute sleeps; time-machine moves only what Python reads as the wall clock.
        traveller = time_machine.travel(dt.datetime.fromisoformat(moment), tick=True)
        traveller.start()
        config.stash[_CLOCK] = traveller


def pytest_unconfigure(config: pytest.Config) -> None:
    traveller = config.stash.get(_CLOCK, None)
    if traveller is not None:
        traveller.stop()


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.getoption("--clock"):
        return f"clock moved: today is {dt.date.today().isoformat()}, now {dt.datetime.now().isoformat(timespec='seconds')}"
    return None


_CLOCK = pytest.StashKey[object]()

# Every InteractiveShell registers its own clean-up with atexit (a reset ending in a full
# garbage collection) and starts a history thread; both keep the shell, and all its
# namespace holds, alive to the end of the run. Hundreds of test shells made pytest's exit
# take minutes (a full collection per shell, over everything they kept). A shell a test
# made is released once the test is over, unless it is still the current instance.
_made_shells: list[InteractiveShell] = []
_shell_init = InteractiveShell.__init__


def _recorded_init(self: InteractiveShell, *args: object, **kwargs: object) -> None:
    _shell_init(self, *args, **kwargs)
    _made_shells.append(self)


InteractiveShell.__init__ = _recorded_init  # type: ignore[method-assign]


def release_shell(shell: InteractiveShell) -> None:
    """What the shell's atexit clean-up would hold on to, let go now."""
    import atexit

    atexit.unregister(shell.atexit_operations)
    save_thread = getattr(getattr(shell, "history_manager", None), "save_thread", None)
    if save_thread is not None:
        save_thread.stop()


@pytest.fixture(autouse=True)
def _release_test_shells():
    yield
    current = InteractiveShell._instance if InteractiveShell.initialized() else None
    kept = [sh for sh in _made_shells if sh is current]
    for shell in _made_shells:
        if shell is not current:
            release_shell(shell)
    _made_shells[:] = kept


@pytest.fixture(autouse=True)
def _no_served_model_carried_over():
    """Each test's local servers start unknown. The process remembers the model a keyless
    server lists, by base URL (providers/served_models.py); a test's mock server on a port an
    earlier test's server had got that server's model (seen in a random-order run)."""
    yield
    from jupyter_brain.providers import served_models

    served_models.forget_all()


@pytest.fixture(autouse=True, scope="session")
def _warmed_up():
    """``%load_ext``'s background warm-up (notebook/warm_up.py), done before the first test:
    in this process it would otherwise run beside whichever tests come first."""
    from jupyter_brain.notebook import warm_up

    warm_up.start()
    warm_up.wait(120)


@pytest.fixture()
def shell(tmp_path, monkeypatch):
    """An in-process IPython with jupyter_brain loaded, in a fresh folder, with no API keys."""
    monkeypatch.chdir(tmp_path)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    InteractiveShell.clear_instance()
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "jupyter_brain")
    yield sh
    magics = sh.magics_manager.registry["AgentMagics"]
    if magics._manager is not None:
        magics._manager.event_log.close()
    sh.run_line_magic("unload_ext", "jupyter_brain")
    InteractiveShell.clear_instance()


@pytest.fixture()
def live_reruns(shell):
    """Re-runs of a cell call the model (``AgentMagics.replay = "off"``): for tests of what a
    re-run sends; a re-run that matches its recording replays instead (test_replay_kernel.py)."""
    shell.run_line_magic("config", 'AgentMagics.replay = "off"')
    return shell
