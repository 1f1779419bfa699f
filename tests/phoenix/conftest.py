"""Fixtures of the Phoenix tests: one real Phoenix per session, from its own virtualenv.

Every test here is marked ``phoenix`` (scripts/test.sh runs them in a part of their own,
after building the venv). Outside CI a missing venv skips them with the command that builds
it; under ``CI=true`` it fails them: CI promises that a real Phoenix read the traces back.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .server import PhoenixServer, PhoenixUnavailable, start_phoenix

ROOT = Path(__file__).resolve().parents[2]
PHOENIX_PYTHON = Path(os.environ.get("JUPYTER_BRAIN_PHOENIX_PYTHON", ROOT / "build" / "phoenix" / "venv" / "bin" / "python"))
TEST_TIMEOUT_S = 900  # a whole test, the server's first start included, on a busy machine


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.phoenix)
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT_S))


@pytest.fixture(scope="session")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    if not PHOENIX_PYTHON.exists():
        message = f"no Phoenix venv at {PHOENIX_PYTHON}: build it with `python scripts/phoenix_env.py`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    try:
        server = start_phoenix(PHOENIX_PYTHON, tmp_path_factory.mktemp("phoenix"))
    except PhoenixUnavailable as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        server.stop()
